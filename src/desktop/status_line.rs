//! The one line the tray menu shows: notes, last sync, passages waiting for vectors, the
//! model, or what the app is busy with, or what went wrong.

use crate::engine::Status;

/// What the app is doing right now, if anything worth showing.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Activity {
    /// Nothing: the line shows the last sync.
    #[default]
    Idle,
    /// A sync is running.
    Indexing,
    /// Passages are being embedded: `done` of `total`.
    Embedding {
        /// Passages embedded so far.
        done: u64,
        /// Passages to embed in this pass.
        total: u64,
        /// Seconds left, once there is a rate to go by.
        eta_secs: Option<u64>,
    },
    /// The model is downloading: `done` of `total` bytes.
    Downloading {
        /// Bytes present.
        done: u64,
        /// Bytes in all.
        total: u64,
    },
    /// The last action failed; the line says why until the next one succeeds.
    Failed(String),
}

/// The status line for `status` at Unix time `now`, e.g.
/// `31 notes · synced 2 min ago · 12 passages to embed · nomic-embed-text-v1.5`.
pub fn status_line(status: &Status, activity: &Activity, now: i64) -> String {
    if let Activity::Failed(message) = activity {
        return format!("Error: {message}");
    }
    if !status.root_exists {
        return format!("No brain folder at {}", status.root);
    }
    let mut parts = vec![plural(status.notes, "note", "notes")];
    match activity {
        Activity::Indexing => parts.push("indexing…".into()),
        Activity::Embedding {
            done,
            total,
            eta_secs,
        } => parts.push(match eta_secs {
            Some(secs) => format!("embedding {done} of {total}, {} left", left(*secs)),
            None => format!("embedding {done} of {total}"),
        }),
        Activity::Downloading { done, total } => parts.push(format!(
            "downloading model {}% ({} of {} MB)",
            done.saturating_mul(100)
                .checked_div(*total)
                .unwrap_or(0)
                .min(100),
            done / 1_000_000,
            total / 1_000_000
        )),
        Activity::Idle | Activity::Failed(_) => parts.push(match status.last_sync_at {
            Some(at) => format!("synced {}", ago(now.saturating_sub(at))),
            None => "not indexed yet".into(),
        }),
    }
    let week = &status.recalls;
    if week.last_7_days > 0 || week.reads_last_7_days > 0 {
        parts.push(format!(
            "{} · {} this week",
            plural(week.last_7_days, "search", "searches"),
            plural(week.reads_last_7_days, "read", "reads")
        ));
    }
    let embedding = matches!(activity, Activity::Embedding { .. });
    if status.model_installed && status.pending_chunks > 0 && !embedding {
        parts.push(format!(
            "{} to embed",
            plural(status.pending_chunks, "passage", "passages")
        ));
    }
    parts.push(match status.model_installed {
        true => status.model.clone(),
        false => "keywords only (no model)".into(),
    });
    parts.join(" · ")
}

/// `just now`, `5 min ago`, `3 h ago`, `2 days ago`.
pub fn ago(secs: i64) -> String {
    match secs {
        s if s < 60 => "just now".into(),
        s if s < 3600 => format!("{} min ago", s / 60),
        s if s < 86_400 => format!("{} h ago", s / 3600),
        s => plural((s / 86_400) as u64, "day ago", "days ago"),
    }
}

/// `under a minute`, `about 4 min`, `about 2 h 5 min`: an estimate, said as one.
fn left(secs: u64) -> String {
    match secs {
        s if s < 60 => "under a minute".into(),
        s if s < 3600 => format!("about {} min", s.div_ceil(60)),
        s => format!("about {} h {} min", s / 3600, (s % 3600) / 60),
    }
}

fn plural(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status() -> Status {
        Status {
            root: "/home/me/.brain".into(),
            root_exists: true,
            index_path: "/data/brain.sqlite".into(),
            index_bytes: 0,
            notes: 31,
            types: Default::default(),
            chunks: 90,
            pending_chunks: 12,
            last_sync_at: Some(1_000),
            last_sync: None,
            model: "nomic-embed-text-v1.5".into(),
            model_installed: true,
            model_changed: Vec::new(),
            device: "cpu".into(),
            embedded_with: None,
            recalls: Default::default(),
            change_journal: None,
        }
    }

    #[test]
    fn idle_line_has_counts_sync_and_model() {
        let line = status_line(&status(), &Activity::Idle, 1_130);
        assert_eq!(
            line,
            "31 notes · synced 2 min ago · 12 passages to embed · nomic-embed-text-v1.5"
        );
    }

    #[test]
    fn without_a_model_it_says_keywords_only() {
        let s = Status {
            model_installed: false,
            notes: 1,
            last_sync_at: None,
            ..status()
        };
        assert_eq!(
            status_line(&s, &Activity::Idle, 0),
            "1 note · not indexed yet · keywords only (no model)"
        );
    }

    #[test]
    fn activity_replaces_the_sync_time() {
        let s = status();
        assert_eq!(
            status_line(&s, &Activity::Indexing, 0),
            "31 notes · indexing… · 12 passages to embed · nomic-embed-text-v1.5"
        );
        assert_eq!(
            status_line(
                &s,
                &Activity::Embedding {
                    done: 64,
                    total: 128,
                    eta_secs: None
                },
                0
            ),
            "31 notes · embedding 64 of 128 · nomic-embed-text-v1.5"
        );
        let embedding = |eta| Activity::Embedding {
            done: 64,
            total: 8128,
            eta_secs: Some(eta),
        };
        assert_eq!(
            status_line(&s, &embedding(250), 0),
            "31 notes · embedding 64 of 8128, about 5 min left · nomic-embed-text-v1.5"
        );
        assert!(status_line(&s, &embedding(20), 0).contains("under a minute left"));
        assert!(status_line(&s, &embedding(7500), 0).contains("about 2 h 5 min left"));
        let s = Status {
            model_installed: false,
            ..status()
        };
        assert_eq!(
            status_line(
                &s,
                &Activity::Downloading {
                    done: 137_000_000,
                    total: 274_000_000
                },
                0
            ),
            "31 notes · downloading model 50% (137 of 274 MB) · keywords only (no model)"
        );
        assert!(status_line(&s, &Activity::Downloading { done: 5, total: 0 }, 0).contains("0%"));
    }

    #[test]
    fn errors_and_missing_folders_take_the_whole_line() {
        assert_eq!(
            status_line(&status(), &Activity::Failed("disk full".into()), 0),
            "Error: disk full"
        );
        let s = Status {
            root_exists: false,
            ..status()
        };
        assert_eq!(
            status_line(&s, &Activity::Idle, 0),
            "No brain folder at /home/me/.brain"
        );
    }

    #[test]
    fn ages_read_naturally() {
        assert_eq!(ago(5), "just now");
        assert_eq!(ago(61), "1 min ago");
        assert_eq!(ago(7200), "2 h ago");
        assert_eq!(ago(86_400), "1 day ago");
        assert_eq!(ago(3 * 86_400), "3 days ago");
    }
}
