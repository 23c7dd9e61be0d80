package org.hopbench.neo4j;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;
import java.util.Set;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import org.neo4j.configuration.GraphDatabaseSettings;
import org.neo4j.configuration.connectors.BoltConnector;
import org.neo4j.configuration.helpers.SocketAddress;
import org.neo4j.dbms.api.DatabaseManagementService;
import org.neo4j.dbms.api.DatabaseManagementServiceBuilder;
import org.neo4j.graphdb.GraphDatabaseService;
import org.neo4j.graphdb.Result;
import org.neo4j.graphdb.Transaction;
import org.neo4j.io.ByteUnit;

/**
 * Runs an embedded Neo4j with Bolt on a loopback address and APOC core, until SIGTERM.
 *
 * <p>Why a launcher instead of a Neo4j server download: only Maven Central is reachable here, and
 * tests and CI need a real server speaking Bolt. It prints exactly one line starting with
 * {@code hopbench-neo4j ready} once a Bolt handshake succeeds and APOC answers; scripts wait for
 * that line.
 *
 * <p>Locked down, because every local account can reach a loopback port: auth is always on (user
 * {@code neo4j}, the password read from {@code --password-file}, which must be readable by its
 * owner only, or from the environment variable named by {@code --password-env}; never from the
 * command line, which other users can read); the password is set with Bolt off before the
 * first start that uses it, so Neo4j's default password is never reachable; {@code LOAD CSV}
 * may not read {@code file:} URLs (and its import folder is an empty one inside the data
 * folder); only the APOC functions hopbench needs are loaded (no file, export or load
 * procedures); only loopback addresses are accepted.
 *
 * <pre>
 * java -jar hopbench-neo4j.jar --data-dir DIR (--password-file FILE | --password-env NAME)
 *                              [--port 7687] [--host 127.0.0.1] [--page-cache 256m] [--plugins DIR]
 *                              [--setting name=value]...   (any neo4j.conf setting, repeatable)
 * </pre>
 */
public final class Launcher {
    static final String READY = "hopbench-neo4j ready";

    /**
     * No phone-home (there is no network anyway), no 256 MiB pre-allocated log files on a shared
     * disk, no multi-second Netty quiet periods that make SIGTERM take ~15 s, and transaction
     * timeouts enforced within 0.2 s instead of the default 2 s check interval, and transaction
     * logs pruned to the last two 64 MiB files at each checkpoint (every 5 min instead of 15, and
     * at shutdown): the default keeps two days of them, and every export of the 2Wiki graph
     * writes ~650 MB (3.5 GB after a day of work; 68 MB with these settings).
     */
    static final Map<String, String> EXTRA_SETTINGS = Map.of(
            "db.transaction.monitor.check.interval", "200ms",
            "dbms.usage_report.enabled", "false",
            "db.tx_log.preallocate", "false",
            "db.tx_log.rotation.retention_policy", "2 files",
            "db.tx_log.rotation.size", "64M",
            "db.checkpoint.interval.time", "5m",
            "internal.dbms.bolt.netty_server_shutdown_quiet_period", "0",
            "internal.dbms.bolt.netty_server_shutdown_timeout", "5",
            "internal.server.bolt.connection_shutdown_wait_time", "1s",
            "internal.server.bolt.thread_pool_shutdown_wait_time", "1s");

    /**
     * The only plugin procedures and functions loaded: what hopbench's queries and tests call.
     * APOC core also has file readers and writers (apoc.load.*, apoc.import.*, apoc.export.*,
     * apoc.log.*); they are not loaded at all.
     */
    static final List<String> PROCEDURE_ALLOWLIST = List.of(
            "apoc.version", "apoc.map.*", "apoc.coll.*", "apoc.util.sleep");

    /** File in the data folder holding the SHA-256 of the password last set (0600). */
    static final String AUTH_MARKER = "hopbench-auth.sha256";

    private Launcher() {}

    public static void main(String[] argv) {
        long t0 = System.nanoTime();
        PrintStream out = System.out;
        Options opt;
        try {
            opt = Options.parse(argv);
        } catch (IllegalArgumentException e) {
            System.err.println("hopbench-neo4j: " + e.getMessage());
            System.err.println(Options.USAGE);
            System.exit(2);
            return;
        }

        AtomicReference<DatabaseManagementService> service = new AtomicReference<>();
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            DatabaseManagementService dbms = service.getAndSet(null);
            if (dbms != null) {
                out.println("hopbench-neo4j stopping");
                out.flush();
                dbms.shutdown();
                out.println("hopbench-neo4j stopped");
                out.flush();
            }
            stopped.countDown();
        }, "hopbench-neo4j-shutdown"));

        DatabaseManagementService dbms;
        try {
            Files.createDirectories(opt.dataDir);
            setPasswordWithBoltOff(opt);
            dbms = builder(opt, true).build();
        } catch (Exception e) {
            System.err.println("hopbench-neo4j: could not start Neo4j on " + opt.host + ":" + opt.port
                    + " with data directory " + opt.dataDir + ": " + rootMessage(e));
            System.err.println("hopbench-neo4j: details are in " + opt.dataDir.resolve("logs/debug.log"));
            Runtime.getRuntime().halt(1);
            return;
        }
        service.set(dbms);

        try {
            GraphDatabaseService db = dbms.database(GraphDatabaseSettings.DEFAULT_DATABASE_NAME);
            if (!db.isAvailable(TimeUnit.MINUTES.toMillis(2))) {
                throw new IllegalStateException("database 'neo4j' did not become available within 2 minutes");
            }
            Map<String, Object> versions = versions(db);
            waitForBolt(opt.host, opt.port, 30_000);
            long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
            out.println(READY + " bolt://" + opt.host + ":" + opt.port
                    + " neo4j=" + versions.get("neo4j") + " apoc=" + versions.get("apoc")
                    + " auth=true data=" + opt.dataDir + " startup_ms=" + ms);
            out.flush();
        } catch (Exception e) {
            System.err.println("hopbench-neo4j: started but not usable: " + rootMessage(e));
            System.exit(1);  // the shutdown hook stops the database cleanly
            return;
        }

        try {
            stopped.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** The database with hopbench's settings; Bolt on or off. */
    private static DatabaseManagementServiceBuilder builder(Options opt, boolean bolt) throws IOException {
        Path importDir = opt.dataDir.resolve("import");
        Files.createDirectories(importDir);
        return new DatabaseManagementServiceBuilder(opt.dataDir)
                .loadPropertiesFromFile(writeSettings(opt.dataDir, opt.settings))
                .setConfig(BoltConnector.enabled, bolt)
                .setConfig(BoltConnector.listen_address, new SocketAddress(opt.host, opt.port))
                .setConfig(BoltConnector.advertised_address, new SocketAddress(opt.host, opt.port))
                .setConfig(BoltConnector.encryption_level, BoltConnector.EncryptionLevel.DISABLED)
                .setConfig(GraphDatabaseSettings.auth_enabled, true)
                .setConfig(GraphDatabaseSettings.allow_file_urls, false)
                .setConfig(GraphDatabaseSettings.load_csv_file_url_root, importDir)
                .setConfig(GraphDatabaseSettings.plugin_dir, opt.pluginDir)
                .setConfig(GraphDatabaseSettings.procedure_allowlist, PROCEDURE_ALLOWLIST)
                .setConfig(GraphDatabaseSettings.pagecache_memory, opt.pageCacheBytes);
    }

    /**
     * Set user neo4j's password in a start with Bolt off, when the data folder was not yet
     * started with this password (a new folder, or a new password): with Bolt on, Neo4j's
     * default password would be reachable for a moment. Embedded transactions bypass auth.
     */
    private static void setPasswordWithBoltOff(Options opt) throws IOException {
        Path marker = opt.dataDir.resolve(AUTH_MARKER);
        String digest = sha256(opt.password);
        if (Files.exists(marker) && Files.readString(marker).trim().equals(digest)) {
            return;
        }
        DatabaseManagementService init = builder(opt, false).build();
        try {
            init.database(GraphDatabaseSettings.SYSTEM_DATABASE_NAME).executeTransactionally(
                    "ALTER USER neo4j SET PASSWORD $pw CHANGE NOT REQUIRED", Map.of("pw", opt.password));
        } finally {
            init.shutdown();
        }
        Path tmp = opt.dataDir.resolve(AUTH_MARKER + ".tmp");
        Files.deleteIfExists(tmp);
        Files.createFile(tmp);
        ownerOnly(tmp);
        Files.writeString(tmp, digest + "\n");
        Files.move(tmp, marker, java.nio.file.StandardCopyOption.REPLACE_EXISTING,
                java.nio.file.StandardCopyOption.ATOMIC_MOVE);
    }

    private static void ownerOnly(Path p) throws IOException {
        try {
            Files.setPosixFilePermissions(p, Set.of(PosixFilePermission.OWNER_READ, PosixFilePermission.OWNER_WRITE));
        } catch (UnsupportedOperationException e) {
            // not a POSIX file system: nothing to restrict
        }
    }

    static String sha256(String text) {
        try {
            return HexFormat.of().formatHex(
                    MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The public builder takes only typed settings; untyped ones go through a properties file. */
    private static Path writeSettings(Path home, Map<String, String> settings) throws IOException {
        Path conf = home.resolve("conf").resolve("hopbench-launcher.conf");
        Files.createDirectories(conf.getParent());
        StringBuilder sb = new StringBuilder("# written by hopbench-neo4j at every start\n");
        settings.forEach((k, v) -> sb.append(k).append('=').append(v).append('\n'));
        Files.writeString(conf, sb.toString());
        return conf;
    }

    /** Neo4j and APOC versions; fails if APOC's functions are not registered. */
    private static Map<String, Object> versions(GraphDatabaseService db) {
        try (Transaction tx = db.beginTx();
             Result r = tx.execute("CALL dbms.components() YIELD versions "
                     + "RETURN versions[0] AS neo4j, apoc.version() AS apoc, "
                     + "apoc.map.fromPairs([['probe', 1]]).probe AS probe")) {
            Map<String, Object> row = r.next();
            if (!Long.valueOf(1).equals(row.get("probe"))) {
                throw new IllegalStateException("apoc.map.fromPairs returned " + row.get("probe"));
            }
            return row;
        } catch (RuntimeException e) {
            throw new IllegalStateException("APOC core is not registered (" + rootMessage(e) + ")", e);
        }
    }

    /** Wait until Bolt accepts a TCP connection and answers the Bolt handshake with a version. */
    private static void waitForBolt(String host, int port, long timeoutMs) throws IOException, InterruptedException {
        long deadline = System.currentTimeMillis() + timeoutMs;
        IOException last = null;
        while (System.currentTimeMillis() < deadline) {
            try (Socket s = new Socket()) {
                s.connect(new InetSocketAddress(host, port), 1000);
                s.setSoTimeout(2000);
                OutputStream os = s.getOutputStream();
                // magic preamble, then four proposed versions (5.0, 4.4, none, none)
                os.write(new byte[] {
                    0x60, 0x60, (byte) 0xB0, 0x17,
                    0, 0, 0, 5,
                    0, 0, 4, 4,
                    0, 0, 0, 0,
                    0, 0, 0, 0});
                os.flush();
                int agreed = new DataInputStream(s.getInputStream()).readInt();
                if (agreed != 0) {
                    return;
                }
                last = new IOException("Bolt handshake offered no common protocol version");
            } catch (IOException e) {
                last = e;
            }
            Thread.sleep(200);
        }
        throw new IOException("Bolt did not answer on " + host + ":" + port + " within " + timeoutMs + " ms"
                + (last == null ? "" : ": " + last.getMessage()));
    }

    private static String rootMessage(Throwable e) {
        Throwable t = e;
        while (t.getCause() != null && t.getCause() != t) {
            t = t.getCause();
        }
        String msg = t.getMessage();
        return t.getClass().getSimpleName() + (msg == null ? "" : ": " + msg);
    }

    /** Command-line options. */
    static final class Options {
        static final String USAGE = "usage: java -jar hopbench-neo4j.jar --data-dir DIR "
                + "(--password-file FILE | --password-env NAME) [--port 7687] [--host 127.0.0.1] "
                + "[--page-cache 256m] [--plugins DIR] [--setting name=value]...";

        Path dataDir;
        String host = "127.0.0.1";
        int port = 7687;
        long pageCacheBytes = ByteUnit.mebiBytes(256);
        Path pluginDir;
        String password;  // user neo4j's password (auth is always on)
        final Map<String, String> settings = new java.util.LinkedHashMap<>(EXTRA_SETTINGS);

        static Options parse(String[] argv) {
            Options o = new Options();
            for (int i = 0; i < argv.length; i++) {
                String a = argv[i];
                if (a.equals("-h") || a.equals("--help")) {
                    System.out.println(USAGE);
                    System.exit(0);
                }
                if (i + 1 >= argv.length) {
                    throw new IllegalArgumentException("missing value after " + a);
                }
                String v = argv[++i];
                switch (a) {
                    case "--data-dir" -> o.dataDir = Path.of(v).toAbsolutePath().normalize();
                    case "--host" -> o.host = v;
                    case "--port" -> o.port = parsePort(v);
                    case "--page-cache" -> o.pageCacheBytes = parseBytes(v);
                    case "--plugins" -> o.pluginDir = Path.of(v).toAbsolutePath().normalize();
                    case "--password-env" -> o.password = passwordFromEnv(v);
                    case "--password-file" -> o.password = passwordFromFile(Path.of(v));
                    case "--setting" -> {
                        int eq = v.indexOf('=');
                        if (eq <= 0) {
                            throw new IllegalArgumentException("--setting needs name=value, got '" + v + "'");
                        }
                        o.settings.put(v.substring(0, eq).trim(), v.substring(eq + 1).trim());
                    }
                    default -> throw new IllegalArgumentException("unknown option " + a);
                }
            }
            if (o.dataDir == null) {
                throw new IllegalArgumentException("--data-dir is required");
            }
            if (o.password == null) {
                throw new IllegalArgumentException("a password is required (auth is always on): "
                        + "--password-file FILE (scripts/neo4j-up.sh makes one per data folder) or "
                        + "--password-env NAME");
            }
            requireLoopback(o.host);
            if (o.pluginDir == null) {
                o.pluginDir = besideJar("plugins");
            }
            if (!Files.isDirectory(o.pluginDir)) {
                throw new IllegalArgumentException("plugin directory " + o.pluginDir
                        + " does not exist (it holds apoc-core; rebuild with mvn package)");
            }
            return o;
        }

        /** A development server: listening anywhere but loopback is refused. */
        static void requireLoopback(String host) {
            try {
                if (!InetAddress.getByName(host).isLoopbackAddress()) {
                    throw new IllegalArgumentException("--host " + host
                            + " is not a loopback address; this development server listens on loopback only");
                }
            } catch (IOException e) {
                throw new IllegalArgumentException("--host " + host + " does not resolve: " + e.getMessage());
            }
        }

        static String passwordFromEnv(String name) {
            String pw = System.getenv(name);
            if (pw == null || pw.length() < 8) {
                throw new IllegalArgumentException("--password-env " + name
                        + ": the environment variable must hold a password of at least 8 characters");
            }
            return pw;
        }

        /** The first line of a file only its owner may read (like ssh's keys). */
        static String passwordFromFile(Path file) {
            try {
                Set<PosixFilePermission> perms = Files.getPosixFilePermissions(file);
                for (PosixFilePermission p : perms) {
                    if (p.name().startsWith("GROUP") || p.name().startsWith("OTHERS")) {
                        throw new IllegalArgumentException("--password-file " + file + " is readable by "
                                + "other users (" + java.nio.file.attribute.PosixFilePermissions.toString(perms)
                                + "); chmod 600 it");
                    }
                }
            } catch (UnsupportedOperationException e) {
                // not a POSIX file system
            } catch (IOException e) {
                throw new IllegalArgumentException("--password-file " + file + ": " + e.getMessage());
            }
            String pw;
            try {
                List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8);
                pw = lines.isEmpty() ? "" : lines.get(0).strip();
            } catch (IOException e) {
                throw new IllegalArgumentException("--password-file " + file + " cannot be read: " + e);
            }
            if (pw.length() < 8) {
                throw new IllegalArgumentException("--password-file " + file
                        + ": the first line must hold a password of at least 8 characters");
            }
            return pw;
        }

        static int parsePort(String v) {
            try {
                int p = Integer.parseInt(v);
                if (p < 1 || p > 65535) {
                    throw new NumberFormatException();
                }
                return p;
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("--port must be 1..65535, got '" + v + "'");
            }
        }

        static long parseBytes(String v) {
            String s = v.trim().toLowerCase();
            long mult = 1;
            if (s.endsWith("k")) {
                mult = ByteUnit.kibiBytes(1);
            } else if (s.endsWith("m")) {
                mult = ByteUnit.mebiBytes(1);
            } else if (s.endsWith("g")) {
                mult = ByteUnit.gibiBytes(1);
            }
            if (mult != 1) {
                s = s.substring(0, s.length() - 1);
            }
            try {
                return Long.parseLong(s) * mult;
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("--page-cache must look like 256m or 1g, got '" + v + "'");
            }
        }

        static Path besideJar(String name) {
            try {
                Path jar = Path.of(Launcher.class.getProtectionDomain().getCodeSource().getLocation().toURI());
                return jar.getParent().resolve(name);
            } catch (URISyntaxException e) {
                throw new IllegalStateException(e);
            }
        }
    }
}
