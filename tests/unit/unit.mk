# Host unit tests (cmocka): list parser, trie compiler, shared inline code.
UNIT_TESTS :=

test-unit: $(OUTPUT)/hdrstrip
