// WCC scatter kernel (the paper's Listing 3): forward the label through one pipeline register.
module wcc_scatter #(parameter W = 8, parameter N = 8) (
    input sys_clk, input sys_rst,
    input [W-1:0] update_in_label, input [W-1:0] sender_in, input [15:0] round_in,
    input barrier_in, input [W-1:0] neighbor_in, input [N-1:0] num_neighbors_in,
    input valid_in, output ready,
    output reg [W-1:0] message_out_label, output reg [W-1:0] neighbor_out,
    output reg [W-1:0] sender_out, output reg [15:0] round_out, output reg barrier_out,
    output reg valid_out, input message_ack);
  assign ready = message_ack | ~valid_out;
  always @(posedge sys_clk) begin
    if (sys_rst) begin
      valid_out <= 1'b0;
    end else if (ready) begin
      message_out_label <= update_in_label;
      neighbor_out <= neighbor_in;
      sender_out <= sender_in;
      round_out <= round_in;
      valid_out <= valid_in;
      barrier_out <= barrier_in;
    end
  end
endmodule
