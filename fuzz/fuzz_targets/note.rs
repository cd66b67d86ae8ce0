//! Fuzzes brain::fuzzing::note with raw bytes.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| brain::fuzzing::note(data));
