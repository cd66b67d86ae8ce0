//! brain for Claude: `brain get` through the binary, the skill's command lines, and the
//! MCP server in a real client session.

#[path = "../common/mod.rs"]
mod common;

mod get;
mod mcp;
mod skill;
