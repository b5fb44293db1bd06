// WCC apply kernel (the paper's Listing 2); the barrier item also leaves on the update port.
module wcc_apply #(parameter W = 8) (
    input sys_clk,
    input [W-1:0] nodeid_in, input [W-1:0] state_in_label, input state_in_active,
    input [15:0] round_in, input barrier_in, input valid_in, output ready,
    output [W-1:0] nodeid_out, output [W-1:0] state_out_label, output state_out_active,
    output state_barrier, output state_valid,
    output [W-1:0] update_out_label, output [W-1:0] update_sender, output [15:0] update_round,
    output barrier_out, output update_valid, input update_ack);
  assign nodeid_out = nodeid_in;
  assign state_out_label = state_in_label;
  assign state_out_active = 1'b0;
  assign state_barrier = barrier_in;
  assign state_valid = valid_in;
  assign update_out_label = state_in_label;
  assign update_sender = nodeid_in;
  assign update_round = round_in;
  assign update_valid = valid_in & (state_in_active | barrier_in);
  assign barrier_out = barrier_in;
  assign ready = update_ack | ~update_valid;
endmodule
