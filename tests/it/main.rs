//! The integration tests: one binary (each test binary links candle, tokio and SQLite
//! again, minutes on two cores), one module per area, one harness.

mod harness;

mod architecture;
mod backend;
mod claude;
mod core_cli;
mod faults;
mod fetch;
mod golden;
mod kb;
mod model;
mod nomic;
mod regression;
mod release;
mod retrieval;
mod similar;
mod usage;
