//! Colour for a person at a terminal, as ripgrep gives it: paths magenta, line numbers
//! green, the words a snippet matched in bold red (in place of the `«»` marks a pipe gets),
//! the numbers behind a rank dimmed. Piped output, what scripts and the skill read, stays
//! exactly as it was: `--color auto` (the default) colours only a terminal, and not when
//! `NO_COLOR` is set or `TERM` is `dumb` (`CLICOLOR_FORCE` forces it, as elsewhere).

use anstyle::{AnsiColor, Style};

use super::args::ColorWhen;

/// Whether, and then how, to colour what is printed on stdout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Paint {
    on: bool,
}

const PATH: Style = AnsiColor::Magenta.on_default();
const LINE: Style = AnsiColor::Green.on_default();
const MATCH: Style = AnsiColor::Red.on_default().bold();
const DIM: Style = Style::new().dimmed();
const STRONG: Style = Style::new().bold();

impl Paint {
    /// No colour: pipes, JSON, and the MCP tools' text.
    pub const OFF: Paint = Paint { on: false };

    /// What `--color WHEN` asks for stdout.
    pub fn for_stdout(when: ColorWhen) -> Paint {
        let on = match when {
            ColorWhen::Always => true,
            ColorWhen::Never => false,
            // `CLICOLOR_FORCE=0` forces nothing (the convention: any other value does),
            // though the colour crate reads any value as "force".
            ColorWhen::Auto if std::env::var_os("CLICOLOR_FORCE").is_some_and(|v| v == "0") => {
                std::io::IsTerminal::is_terminal(&std::io::stdout())
                    && anstream::AutoStream::choice(&std::io::stdout())
                        != anstream::ColorChoice::Never
            }
            ColorWhen::Auto => {
                anstream::AutoStream::choice(&std::io::stdout()) != anstream::ColorChoice::Never
            }
        };
        Paint { on }
    }

    fn styled(self, style: Style, text: &str) -> String {
        match self.on {
            true => format!("{}{text}{}", style.render(), style.render_reset()),
            false => text.to_string(),
        }
    }

    /// A note's path.
    pub fn path(self, text: &str) -> String {
        self.styled(PATH, text)
    }

    /// A line number.
    pub fn line(self, text: &str) -> String {
        self.styled(LINE, text)
    }

    /// Numbers a person reads second: a hit's ranks and scores.
    pub fn dim(self, text: &str) -> String {
        self.styled(DIM, text)
    }

    /// What the line is about: a verdict.
    pub fn strong(self, text: &str) -> String {
        self.styled(STRONG, text)
    }

    /// A snippet whose `«marks»` become colour; off, it is left as it is. A mark left open
    /// (a snippet cut inside one) is closed at the end, so no colour runs past the line.
    pub fn marks(self, snippet: &str) -> String {
        if !self.on {
            return snippet.to_string();
        }
        let mut out = String::with_capacity(snippet.len() + 16);
        let mut open = false;
        for c in snippet.chars() {
            match c {
                '«' if !open => {
                    out.push_str(&MATCH.render().to_string());
                    open = true;
                }
                '»' if open => {
                    out.push_str(&MATCH.render_reset().to_string());
                    open = false;
                }
                c => out.push(c),
            }
        }
        if open {
            out.push_str(&MATCH.render_reset().to_string());
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ON: Paint = Paint { on: true };

    #[test]
    fn off_changes_nothing() {
        let s = "a «b» c «d";
        assert_eq!(Paint::OFF.marks(s), s);
        assert_eq!(Paint::OFF.path("lore/x.md"), "lore/x.md");
    }

    #[test]
    fn marks_become_colour_and_an_open_one_is_closed() {
        let red = MATCH.render().to_string();
        let reset = MATCH.render_reset().to_string();
        assert_eq!(ON.marks("a «b» c"), format!("a {red}b{reset} c"));
        assert_eq!(ON.marks("cut «insi"), format!("cut {red}insi{reset}"));
        // A closing mark with none open is text.
        assert_eq!(ON.marks("x » y"), "x » y");
    }

    #[test]
    fn always_and_never_are_what_they_say() {
        assert_eq!(Paint::for_stdout(ColorWhen::Always), ON);
        assert_eq!(Paint::for_stdout(ColorWhen::Never), Paint::OFF);
    }
}
