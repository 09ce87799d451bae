mod approvals;
mod compact;
mod harness;
mod interrupt;
