//! Pinned model manifests (`audit/`), verification before every load, fetch and import.

/// Why a model could not be used.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    /// No manifest of that name is compiled in.
    #[error("unknown model {0:?}; see 'brain model list'")]
    Unknown(String),
    /// The model is not installed in the data dir.
    #[error("model {0} is not installed; run 'brain model fetch'")]
    NotInstalled(String),
}

impl ModelError {
    /// Exit code for a command that fails with this error.
    pub fn exit_code(&self) -> i32 {
        match self {
            ModelError::Unknown(_) => 2,
            ModelError::NotInstalled(_) => 1,
        }
    }
}
