from hopbench.core.hash_inputs import omit_defaults


def test_a_key_at_its_default_is_left_out_and_any_other_value_kept():
    defaults = {"construction": "hopbench", "sample_seed": None}
    assert omit_defaults({"construction": "hopbench", "x": 1}, defaults) == {"x": 1}
    assert omit_defaults({"construction": "hipporag2"}, defaults) == {"construction": "hipporag2"}
    assert omit_defaults({"sample_seed": 0}, defaults) == {"sample_seed": 0}
    assert omit_defaults({"sample_seed": None}, defaults) == {}


def test_a_value_equal_to_the_default_but_of_another_type_is_kept():
    assert omit_defaults({"flag": 1}, {"flag": True}) == {"flag": 1}
    assert omit_defaults({"flag": True}, {"flag": True}) == {}
