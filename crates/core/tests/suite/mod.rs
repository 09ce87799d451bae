mod approvals;
mod compact;
mod escalation;
mod harness;
mod interrupt;
mod mcp_approvals;
mod requirements;
mod sandboxed_patch;
