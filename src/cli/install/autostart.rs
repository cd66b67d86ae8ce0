//! `brain install --autostart`: start `brain serve` (the warm backend) at login. On macOS a
//! LaunchAgent, on Linux a systemd user unit. Both files are rendered on every platform, so
//! both are tested everywhere; only the choice of which one to install depends on the OS.
//! brain writes the file and prints the command that starts it now; it does not run
//! `launchctl` or `systemctl` itself, so an install changes files and nothing else.

use std::path::{Path, PathBuf};

/// The LaunchAgent's label, and its file name.
pub const LAUNCH_AGENT_LABEL: &str = "dev.brain.serve";
/// The systemd user unit's name.
pub const SYSTEMD_UNIT: &str = "brain.service";

/// A login item for `brain serve`, ready to write.
#[derive(Debug, Clone)]
pub struct Autostart {
    /// The file to write.
    pub path: PathBuf,
    /// Its content.
    pub content: String,
    /// What to run to start it now, without logging out.
    pub start: String,
    /// What the person is told once it is written: when it starts, and what to run.
    pub next: String,
    /// What to run to stop a running one once its file is removed.
    pub stop: String,
    /// Left behind by the start command and worth removing with the file.
    pub leftovers: Vec<PathBuf>,
}

/// What the login item runs.
#[derive(Debug, Clone)]
pub struct ServeCommand<'a> {
    /// This binary.
    pub exe: &'a Path,
    /// The brain folder, pinned: a login session has no `BRAIN_DIR`.
    pub root: &'a Path,
    /// `BRAIN_DATA_DIR`, when it was set for the install (else the default applies).
    pub data_dir_env: Option<&'a Path>,
    /// `BRAIN_CONFIG`, when it was set for the install: the backend must read the same
    /// settings (the model above all) as the commands that ask it, or it refuses them.
    pub config_env: Option<&'a Path>,
    /// Where launchd writes the process's stderr.
    pub log_dir: &'a Path,
}

impl ServeCommand<'_> {
    /// The variables the login item sets, as the install had them.
    fn env(&self) -> Vec<(&'static str, String)> {
        [
            ("BRAIN_DATA_DIR", self.data_dir_env),
            ("BRAIN_CONFIG", self.config_env),
        ]
        .into_iter()
        .filter_map(|(k, v)| v.map(|v| (k, lossy(v))))
        .collect()
    }

    fn argv(&self) -> Vec<String> {
        vec![
            lossy(self.exe),
            "--dir".into(),
            lossy(self.root),
            "serve".into(),
        ]
    }
}

/// The login item for this OS, or `None` where brain has none.
pub fn for_this_os(cmd: &ServeCommand) -> Option<Autostart> {
    if cfg!(target_os = "macos") {
        dirs::home_dir().map(|home| launch_agent(&home, cmd))
    } else if cfg!(target_os = "linux") {
        dirs::config_dir().map(|config| systemd_unit(&config, cmd))
    } else {
        None
    }
}

/// `~/Library/LaunchAgents/dev.brain.serve.plist`.
pub fn launch_agent(home: &Path, cmd: &ServeCommand) -> Autostart {
    let path = home
        .join("Library/LaunchAgents")
        .join(format!("{LAUNCH_AGENT_LABEL}.plist"));
    let mut p = String::from(concat!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n",
        "<!DOCTYPE plist PUBLIC \"-//Apple//DTD PLIST 1.0//EN\" \"http://www.apple.com/DTDs/PropertyList-1.0.dtd\">\n",
        "<plist version=\"1.0\">\n<dict>\n",
    ));
    p += &format!("  <key>Label</key>\n  <string>{LAUNCH_AGENT_LABEL}</string>\n");
    p += "  <key>ProgramArguments</key>\n  <array>\n";
    for arg in cmd.argv() {
        p += &format!("    <string>{}</string>\n", xml(&arg));
    }
    p += "  </array>\n";
    let env = cmd.env();
    if !env.is_empty() {
        p += "  <key>EnvironmentVariables</key>\n  <dict>\n";
        for (key, value) in &env {
            p += &format!(
                "    <key>{key}</key>\n    <string>{}</string>\n",
                xml(value)
            );
        }
        p += "  </dict>\n";
    }
    // Started at login, not restarted: `brain serve` exits at once when the app (or another
    // serve) already holds this brain, and KeepAlive would retry that forever.
    p += "  <key>RunAtLoad</key>\n  <true/>\n";
    p += &format!(
        "  <key>StandardErrorPath</key>\n  <string>{}</string>\n",
        xml(&lossy(&cmd.log_dir.join("serve.stderr.log")))
    );
    p += "</dict>\n</plist>\n";
    let shown = lossy(&path);
    Autostart {
        start: format!(
            "launchctl bootstrap gui/$(id -u) {}",
            super::claude::shell_word(&shown)
        ),
        stop: format!("launchctl bootout gui/$(id -u)/{LAUNCH_AGENT_LABEL}"),
        path,
        content: p,
        leftovers: Vec::new(),
        next: String::new(),
    }
    .told("starts at the next login; to start it now")
}

impl Autostart {
    fn told(mut self, what: &str) -> Autostart {
        self.next = format!("{what}: {}", self.start);
        self
    }
}

/// `~/.config/systemd/user/brain.service`.
pub fn systemd_unit(config_dir: &Path, cmd: &ServeCommand) -> Autostart {
    let dir = config_dir.join("systemd/user");
    let exec: Vec<String> = cmd.argv().iter().map(|a| systemd_word(a)).collect();
    let mut u = format!(
        "[Unit]\nDescription=brain: warm search backend for {}\n\n[Service]\nExecStart={}\n",
        systemd_escape(&lossy(cmd.root)),
        exec.join(" ")
    );
    for (key, value) in cmd.env() {
        u += &format!("Environment={}\n", systemd_word(&format!("{key}={value}")));
    }
    // on-failure, not always: a clean exit (another backend already serves) is final.
    u += "Restart=on-failure\nRestartSec=5\n\n[Install]\nWantedBy=default.target\n";
    Autostart {
        path: dir.join(SYSTEMD_UNIT),
        content: u,
        start: format!(
            "systemctl --user daemon-reload && systemctl --user enable --now {SYSTEMD_UNIT}"
        ),
        // Said once the file and its `wants` link are gone, which `disable` needs: `stop`
        // works on the unit systemd still has loaded, and the reload forgets it.
        stop: format!("systemctl --user stop {SYSTEMD_UNIT}; systemctl --user daemon-reload"),
        leftovers: vec![dir.join("default.target.wants").join(SYSTEMD_UNIT)],
        next: String::new(),
    }
    // A unit file alone starts nothing: systemd runs it at login once it is enabled.
    .told("enable it to start at each login, and now")
}

fn lossy(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

fn xml(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// `%` and `$` are expanded by systemd itself, in any line.
fn systemd_escape(s: &str) -> String {
    s.replace('%', "%%").replace('$', "$$")
}

/// One word of an ExecStart= or Environment= line, quoted.
fn systemd_word(s: &str) -> String {
    format!(
        "\"{}\"",
        systemd_escape(s).replace('\\', r"\\").replace('"', "\\\"")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cmd<'a>(exe: &'a Path, root: &'a Path, data: Option<&'a Path>) -> ServeCommand<'a> {
        ServeCommand {
            exe,
            root,
            data_dir_env: data,
            config_env: data.map(|_| Path::new("/c/brain.toml")),
            log_dir: Path::new("/d/logs"),
        }
    }

    #[test]
    fn launch_agent_runs_serve_for_the_pinned_root() {
        let a = launch_agent(
            Path::new("/Users/me"),
            &cmd(
                Path::new("/opt/brain & co/brain"),
                Path::new("/Users/me/.brain"),
                Some(Path::new("/d")),
            ),
        );
        assert_eq!(
            a.path,
            Path::new("/Users/me/Library/LaunchAgents/dev.brain.serve.plist")
        );
        assert!(a.content.contains(
            "    <string>/opt/brain &amp; co/brain</string>\n    <string>--dir</string>\n    <string>/Users/me/.brain</string>\n    <string>serve</string>\n"
        ), "{}", a.content);
        assert!(a.content.contains(
            "<key>BRAIN_DATA_DIR</key>\n    <string>/d</string>\n    <key>BRAIN_CONFIG</key>\n    <string>/c/brain.toml</string>\n  </dict>"
        ), "{}", a.content);
        assert!(a.content.contains("<key>RunAtLoad</key>\n  <true/>"));
        assert_eq!(
            a.content.matches("<dict>").count(),
            a.content.matches("</dict>").count()
        );
        assert!(a
            .start
            .starts_with("launchctl bootstrap gui/$(id -u) /Users/me/Library/LaunchAgents/"));
    }

    #[test]
    fn systemd_unit_quotes_and_escapes() {
        let a = systemd_unit(
            Path::new("/home/me/.config"),
            &cmd(Path::new("/bin/brain"), Path::new("/n/100%"), None),
        );
        assert_eq!(
            a.path,
            Path::new("/home/me/.config/systemd/user/brain.service")
        );
        assert!(
            a.content
                .contains("ExecStart=\"/bin/brain\" \"--dir\" \"/n/100%%\" \"serve\"\n"),
            "{}",
            a.content
        );
        assert!(!a.content.contains("Environment="));
        assert!(a.content.ends_with("[Install]\nWantedBy=default.target\n"));
        let a = systemd_unit(
            Path::new("/home/me/.config"),
            &cmd(
                Path::new("/bin/brain"),
                Path::new("/n"),
                Some(Path::new("/d")),
            ),
        );
        assert!(
            a.content.contains(
                "Environment=\"BRAIN_DATA_DIR=/d\"\nEnvironment=\"BRAIN_CONFIG=/c/brain.toml\"\n"
            ),
            "{}",
            a.content
        );
    }
}
