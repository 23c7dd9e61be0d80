"""QAFD: its answering pipeline (flow_diffusion), its code's retrieval (flow_diffusion_code),
hopbench's joint variant, their kernels and the prompts only they use."""
