// WCC gather kernel (the paper's Listing 1): keep the smaller label, mark the vertex active.
module wcc_gather #(parameter W = 8) (
    input sys_clk,
    input [15:0] level_in, input [W-1:0] nodeid_in, input [W-1:0] sender_in,
    input [W-1:0] message_in_label, input [W-1:0] state_in_label, input state_in_active,
    input valid_in, output ready,
    output [W-1:0] nodeid_out, output [W-1:0] state_out_label, output state_out_active,
    output state_valid, input state_ack);
  wire new_label;
  assign new_label = state_in_label > message_in_label;
  assign nodeid_out = nodeid_in;
  assign state_out_label = new_label ? message_in_label : state_in_label;
  assign state_out_active = new_label ? 1'b1 : state_in_active;
  assign state_valid = valid_in;
  assign ready = state_ack;
endmodule
