mod approvals;
mod compact;
mod escalation;
mod harness;
mod interrupt;
