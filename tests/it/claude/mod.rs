//! brain for Claude: `brain get` through the binary, the skill's command lines, the MCP
//! server in a real client session, and install/uninstall into a temp HOME.

mod get;
mod install;
mod mcp;
mod skill;
