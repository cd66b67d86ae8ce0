//! Fuzzes brain::fuzzing::specs with text (the bytes as UTF-8, invalid sequences replaced).
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| brain::fuzzing::specs(&String::from_utf8_lossy(data)));
