mod approvals;
mod harness;
mod interrupt;
