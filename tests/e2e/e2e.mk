# End-to-end tests in network namespaces.
test-e2e: $(OUTPUT)/hdrstrip $(BPF_OBJ)
