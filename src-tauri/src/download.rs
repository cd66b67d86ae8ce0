//! Bytes downloaded so far across the model's files, from `brain::model::fetch`'s
//! per-file progress reports.

use std::collections::HashMap;

use brain::model::fetch::Progress;

/// Bytes present per file.
#[derive(Debug, Default)]
pub struct Files(HashMap<String, u64>);

impl Files {
    /// Records one report; returns the bytes present across all files.
    pub fn update(&mut self, progress: &Progress) -> u64 {
        match progress {
            Progress::Start { file, done, .. } | Progress::Advance { file, done, .. } => {
                self.0.insert(file.clone(), *done);
            }
            // A verified file keeps the size its last report gave.
            Progress::Verified { .. } => {}
            // An optional file left out: its bytes were not kept.
            Progress::Skipped { file, .. } => {
                self.0.remove(file);
            }
        }
        self.0.values().sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums_the_latest_count_of_each_file() {
        let mut f = Files::default();
        let start = |file: &str, done| Progress::Start {
            file: file.into(),
            done,
            total: 100,
        };
        let advance = |file: &str, done| Progress::Advance {
            file: file.into(),
            done,
            total: 100,
        };
        assert_eq!(f.update(&start("a", 0)), 0);
        assert_eq!(f.update(&advance("a", 60)), 60);
        assert_eq!(f.update(&advance("a", 100)), 100);
        assert_eq!(f.update(&Progress::Verified { file: "a".into() }), 100);
        assert_eq!(
            f.update(&start("b", 30)),
            130,
            "a resumed file counts what it already had"
        );
        assert_eq!(f.update(&advance("b", 50)), 150);
    }
}
