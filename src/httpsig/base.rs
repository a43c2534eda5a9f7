//! The signature base (RFC 9421 section 2.5).

use super::components::{ComponentError, ComponentId, SfType};
use super::message::Message;
use super::sfv;

/// Serialize the `@signature-params` value: the Inner List of covered
/// component identifiers with the signature parameters, in the order given
/// (RFC 9421 section 2.3).
pub fn signature_params_value(covered: &[ComponentId], params: &sfv::Params) -> String {
    let mut s = String::with_capacity(64 + covered.len() * 24);
    s.push('(');
    for (i, c) in covered.iter().enumerate() {
        if i > 0 {
            s.push(' ');
        }
        let name = match &c.target {
            super::components::Target::Derived(d) => d.name(),
            super::components::Target::Field(f) => f.as_str(),
        };
        s.push('"');
        s.push_str(name);
        s.push('"');
        sfv::write_params(&mut s, &c.params);
    }
    s.push(')');
    sfv::write_params(&mut s, params);
    s
}

/// Build the signature base (RFC 9421 section 2.5): one line per covered
/// component, `identifier: value`, then the `@signature-params` line; lines
/// joined by LF and no LF after the last.
///
/// `params_value` is the serialized `@signature-params` value, as produced
/// by [`signature_params_value`] for the Inner List received or to be sent.
pub fn signature_base(
    msg: &Message,
    related: Option<&Message>,
    covered: &[ComponentId],
    params_value: &str,
    sf_types: &dyn Fn(&str) -> Option<SfType>,
) -> Result<Vec<u8>, ComponentError> {
    let mut out = Vec::with_capacity(256 + msg.headers.len() * 32);
    let mut cache = super::components::DictCache::default();
    for (i, c) in covered.iter().enumerate() {
        if covered.iter().take(i).any(|o| o.same_as(c)) {
            return Err(ComponentError::Duplicate(c.to_string()));
        }
        let start = out.len();
        let mut id = String::new();
        let name = match &c.target {
            super::components::Target::Derived(d) => d.name(),
            super::components::Target::Field(f) => f.as_str(),
        };
        id.push('"');
        id.push_str(name);
        id.push('"');
        sfv::write_params(&mut id, &c.params);
        out.extend_from_slice(id.as_bytes());
        out.extend_from_slice(b": ");
        c.write_value_cached(&mut out, msg, related, sf_types, &mut cache)?;
        let value = out.get(start..).unwrap_or(&[]);
        // A value must not break the line structure of the base.
        if value.iter().any(|b| matches!(b, b'\n' | b'\r' | 0)) {
            return Err(ComponentError::BadValueByte(c.to_string()));
        }
        // Section 2.5 (and 2.1): the base is ASCII; `;bs` carries other bytes.
        if !value.is_ascii() {
            return Err(ComponentError::NonAsciiValue(c.to_string()));
        }
        out.push(b'\n');
    }
    out.extend_from_slice(b"\"@signature-params\": ");
    out.extend_from_slice(params_value.as_bytes());
    Ok(out)
}
