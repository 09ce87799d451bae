mod approvals;
mod harness;
