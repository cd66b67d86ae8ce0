//! Fuzzes brain::fuzzing::request with raw bytes.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| brain::fuzzing::request(data));
