//! Policy parameters given on the command line (`s3fifo:small=0.1`) and their validation.

use thiserror::Error;

/// One parameter a policy accepts.
#[derive(Clone, Copy, Debug)]
pub struct ParamInfo {
    /// Name as written on the command line.
    pub name: &'static str,
    /// Default value, as it would be written.
    pub default: &'static str,
    /// What it means and what values it takes.
    pub help: &'static str,
}

/// Why a policy could not be built.
#[derive(Debug, Error, PartialEq)]
pub enum ConfigError {
    /// No policy has this name.
    #[error("unknown policy `{name}` (known: {known})")]
    UnknownPolicy {
        /// The name asked for.
        name: String,
        /// Comma-separated list of known names.
        known: String,
    },
    /// No admission filter (or other module written like a policy) has this name.
    #[error("unknown {kind} `{name}` (known: {known})")]
    UnknownModule {
        /// What was asked for (`admission filter`).
        kind: &'static str,
        /// The name asked for.
        name: String,
        /// Comma-separated list of known names.
        known: String,
    },
    /// The policy has no such parameter.
    #[error("policy `{policy}` has no parameter `{param}` (it takes: {allowed})")]
    UnknownParam {
        /// Policy name.
        policy: &'static str,
        /// The parameter asked for.
        param: String,
        /// What it does take.
        allowed: String,
    },
    /// A parameter was written without `=value`.
    #[error("parameter `{0}` needs a value: write `name=value`")]
    MissingValue(String),
    /// A value could not be parsed or is out of range.
    #[error("policy `{policy}`: parameter `{param}` = `{value}`: expected {expected}")]
    BadValue {
        /// Policy name.
        policy: &'static str,
        /// Parameter name.
        param: &'static str,
        /// The value given.
        value: String,
        /// What is allowed (quoting the documented range).
        expected: String,
    },
    /// A parameter was given more than once (`s3fifo:small=0.1:small=0.2`): which one was
    /// meant is unclear, so neither is taken.
    #[error("policy `{policy}`: parameter `{param}` given more than once")]
    RepeatedParam {
        /// Policy name.
        policy: &'static str,
        /// The parameter.
        param: String,
    },
    /// The capacity is unusable for this policy.
    #[error("policy `{policy}`: capacity {capacity} is too small: {why}")]
    Capacity {
        /// Policy name.
        policy: &'static str,
        /// The capacity asked for.
        capacity: u64,
        /// Why it does not work.
        why: &'static str,
    },
}

/// Parameter values for one policy, checked against its [`ParamInfo`] list; missing ones
/// take their defaults.
#[derive(Clone, Debug)]
pub struct Params {
    policy: &'static str,
    allowed: &'static [ParamInfo],
    given: Vec<(String, String)>,
}

impl Params {
    /// Check `given` (name, value) pairs against `allowed`.
    pub fn new(
        policy: &'static str,
        allowed: &'static [ParamInfo],
        given: Vec<(String, String)>,
    ) -> Result<Self, ConfigError> {
        for (i, (name, _)) in given.iter().enumerate() {
            if given[..i].iter().any(|(n, _)| n == name) {
                return Err(ConfigError::RepeatedParam {
                    policy,
                    param: name.clone(),
                });
            }
            if !allowed.iter().any(|p| p.name == name) {
                return Err(ConfigError::UnknownParam {
                    policy,
                    param: name.clone(),
                    allowed: if allowed.is_empty() {
                        "no parameters".into()
                    } else {
                        allowed
                            .iter()
                            .map(|p| p.name)
                            .collect::<Vec<_>>()
                            .join(", ")
                    },
                });
            }
        }
        Ok(Params {
            policy,
            allowed,
            given,
        })
    }

    /// All defaults.
    pub fn defaults(policy: &'static str, allowed: &'static [ParamInfo]) -> Self {
        Params {
            policy,
            allowed,
            given: Vec::new(),
        }
    }

    pub(crate) fn raw(&self, name: &'static str) -> &str {
        if let Some((_, v)) = self.given.iter().rev().find(|(n, _)| n == name) {
            return v;
        }
        self.allowed
            .iter()
            .find(|p| p.name == name)
            .map(|p| p.default)
            .unwrap_or_else(|| panic!("policy {} reads undeclared parameter {name}", self.policy))
    }

    fn bad(&self, param: &'static str, expected: impl Into<String>) -> ConfigError {
        ConfigError::BadValue {
            policy: self.policy,
            param,
            value: self.raw(param).to_string(),
            expected: expected.into(),
        }
    }

    /// A fraction in `[lo, hi]`.
    pub fn fraction(&self, name: &'static str, lo: f64, hi: f64) -> Result<f64, ConfigError> {
        match self.raw(name).parse::<f64>() {
            Ok(v) if v >= lo && v <= hi => Ok(v),
            _ => Err(self.bad(name, format!("a number in {lo}..={hi}"))),
        }
    }

    /// An unsigned integer in `[lo, hi]`.
    pub fn integer(&self, name: &'static str, lo: u64, hi: u64) -> Result<u64, ConfigError> {
        match self.raw(name).parse::<u64>() {
            Ok(v) if v >= lo && v <= hi => Ok(v),
            _ if hi == u64::MAX => Err(self.bad(name, format!("an integer, at least {lo}"))),
            _ => Err(self.bad(name, format!("an integer in {lo}..={hi}"))),
        }
    }

    /// One of a fixed set of words (a variant such as `paper` or `libcachesim`): the word
    /// as declared in `options`, so callers match on `&'static str`; `expected` is what
    /// the error quotes ("paper or libcachesim").
    pub fn choice(
        &self,
        name: &'static str,
        options: &'static [&'static str],
        expected: &'static str,
    ) -> Result<&'static str, ConfigError> {
        let raw = self.raw(name);
        options
            .iter()
            .copied()
            .find(|o| *o == raw)
            .ok_or_else(|| self.bad(name, expected))
    }

    /// A number in `[lo, hi]`, or `None` for the word `auto` (a default derived from the
    /// capacity, such as LeCaR's discount).
    pub fn fraction_or_auto(
        &self,
        name: &'static str,
        lo: f64,
        hi: f64,
    ) -> Result<Option<f64>, ConfigError> {
        if self.raw(name) == "auto" {
            return Ok(None);
        }
        self.fraction(name, lo, hi).map(Some)
    }

    /// An unsigned integer in `[lo, hi]`, or `None` for the word `auto` (a default that
    /// the policy derives from its capacity, such as PinRange's preferred range).
    pub fn integer_or_auto(
        &self,
        name: &'static str,
        lo: u64,
        hi: u64,
    ) -> Result<Option<u64>, ConfigError> {
        if self.raw(name) == "auto" {
            return Ok(None);
        }
        match self.raw(name).parse::<u64>() {
            Ok(v) if v >= lo && v <= hi => Ok(Some(v)),
            _ => Err(self.bad(name, format!("`auto` or an integer in {lo}..={hi}"))),
        }
    }

    /// A boolean (`true`/`false`/`1`/`0`).
    pub fn boolean(&self, name: &'static str) -> Result<bool, ConfigError> {
        match self.raw(name) {
            "true" | "1" | "yes" => Ok(true),
            "false" | "0" | "no" => Ok(false),
            _ => Err(self.bad(name, "true or false")),
        }
    }
}

/// Split `name[:k=v...]` into a lower-case name and its (key, value) pairs: the one syntax
/// of policies and admission filters.
pub(crate) fn split_spec(text: &str) -> Result<(String, Vec<(String, String)>), ConfigError> {
    let mut parts = text.split(':');
    let name = parts.next().unwrap_or_default().trim().to_ascii_lowercase();
    let mut params = Vec::new();
    for part in parts {
        let (k, v) = part
            .split_once('=')
            .ok_or_else(|| ConfigError::MissingValue(part.to_string()))?;
        params.push((k.trim().to_string(), v.trim().to_string()));
    }
    Ok((name, params))
}

/// The inverse of [`split_spec`]: `name:k=v:...` (for reports).
pub(crate) fn join_spec(name: &str, params: &[(String, String)]) -> String {
    let mut s = name.to_string();
    for (k, v) in params {
        s.push(':');
        s.push_str(k);
        s.push('=');
        s.push_str(v);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    const P: &[ParamInfo] = &[ParamInfo {
        name: "small",
        default: "0.1",
        help: "share, 0..=1",
    }];

    fn given(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect()
    }

    #[test]
    fn range_errors_quote_the_range_and_repeats_are_refused() {
        let p = Params::new("s3fifo", P, given(&[("small", "2")])).unwrap();
        assert_eq!(
            p.fraction("small", 0.0, 1.0).unwrap_err().to_string(),
            "policy `s3fifo`: parameter `small` = `2`: expected a number in 0..=1"
        );
        assert_eq!(
            p.integer("small", 0, 1).unwrap_err().to_string(),
            "policy `s3fifo`: parameter `small` = `2`: expected an integer in 0..=1"
        );
        let e = Params::new("s3fifo", P, given(&[("small", "0.1"), ("small", "0.2")])).unwrap_err();
        assert_eq!(
            e.to_string(),
            "policy `s3fifo`: parameter `small` given more than once"
        );
    }
}
