# Packet tests through BPF_PROG_TEST_RUN on the real object.
test-pkt: $(BPF_OBJ)
