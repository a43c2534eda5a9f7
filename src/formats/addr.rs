//! Classification of the host an endpoint names: is it a public address, or
//! does it point inside (loopback, private, link-local, ...)?
//!
//! One pure function, [`classify_host`], shared by `lint` (what a descriptor
//! *advertises*) and the network fetcher (what a resolver *connects to*).
//! The ranges are those draft-narvaneni-agent-uri-03 section 5.2 orders a
//! resolver to refuse, plus the other non-routable ranges of the IANA special
//! purpose registries (RFC 6890):
//!
//! * IPv4: `0.0.0.0/8`, `10/8`, `100.64/10` (RFC 6598 shared address space,
//!   carrier-grade NAT), `127/8`, `169.254/16` (cloud metadata endpoints),
//!   `172.16/12`, `192.0.0/24` (RFC 6890 IETF protocol assignments),
//!   `192.168/16`, `198.18/15` (RFC 2544 benchmarking), `224/4` multicast,
//!   `240/4` reserved including `255.255.255.255`;
//! * IPv6: `::/128`, `::1/128`, `fc00::/7`, `fe80::/10`, `fec0::/10`
//!   (deprecated site-local), `ff00::/8` multicast, `2001:db8::/32`
//!   (RFC 3849 documentation); `::ffff:0:0/96`
//!   (IPv4-mapped, draft-narvaneni-agent-uri-03 section 5.2: MUST be unwrapped and re-checked),
//!   `::/96` (deprecated IPv4-compatible) and `64:ff9b::/96` (RFC 6052 NAT64)
//!   are unwrapped too, so `[::ffff:127.0.0.1]` is loopback; so is the
//!   IPv4 address of an RFC 3056 6to4 address (`2002::/16`, bits 16-47);
//!   refused whole (RFC 6890 / IANA special-purpose registry, not globally
//!   reachable): Teredo `2001::/32` (RFC 4380; its client address is
//!   obfuscated), benchmarking `2001:2::/48` (RFC 5180), local-use NAT64
//!   `64:ff9b:1::/48` (RFC 8215) and discard-only `100::/64` (RFC 6666);
//! * IPv4 literals in the legacy forms a URL parser (WHATWG URL "IPv4
//!   parser") and `inet_aton` accept: `2130706433`, `0x7f.1`, `017700000001`
//!   are all `127.0.0.1`;
//! * names: `localhost` and `*.localhost` (RFC 6761 section 6.3), `*.local`
//!   (RFC 6762 mDNS), `*.internal` (ICANN private-use TLD, e.g.
//!   `metadata.google.internal`), `*.home.arpa` (RFC 8375), `*.localdomain`,
//!   and single-label names (they resolve through a search domain, inside).
//!
//! A name is classified by its text only; a public-looking name may still
//! resolve to an internal address, which the fetcher must check again after
//! resolution (draft-narvaneni-agent-uri-03 section 5.2, "at every stage").

use std::net::{Ipv4Addr, Ipv6Addr};

/// Where a host points.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HostClass {
    /// A public (globally routable) address or a public DNS name.
    Public,
    /// Loopback: `127/8`, `::1`, `localhost`, `*.localhost`.
    Loopback,
    /// Private: RFC 1918 `10/8`, `172.16/12`, `192.168/16`.
    Private,
    /// RFC 6598 shared address space `100.64/10` (carrier-grade NAT).
    SharedAddressSpace,
    /// Link-local: `169.254/16` (cloud metadata), `fe80::/10`.
    LinkLocal,
    /// IPv6 unique local `fc00::/7` or deprecated site-local `fec0::/10`.
    UniqueLocal,
    /// "This network" `0/8` or the unspecified address `::`.
    Unspecified,
    /// Multicast `224/4`, `ff00::/8`.
    Multicast,
    /// Reserved, not routable: `240/4` (with broadcast), `192.0.0/24`,
    /// `198.18/15`, documentation ranges, Teredo `2001::/32`,
    /// `2001:2::/48`, `64:ff9b:1::/48`, `100::/64`.
    Reserved,
    /// A name that only resolves on a local network: `*.local`,
    /// `*.internal`, `*.home.arpa`, `*.localdomain`, or a single label.
    LocalName,
    /// Not a host at all (empty, bad characters, malformed literal).
    Invalid,
}

impl HostClass {
    /// True for every class but [`HostClass::Public`]: an endpoint here is
    /// refused by the SSRF rules (draft-narvaneni-agent-uri-03 section 5.2, the Web of Agents draft section 8.2).
    pub fn is_internal(self) -> bool {
        self != HostClass::Public
    }

    /// Short lowercase label for messages (`"loopback"`, `"private"`, ...).
    pub fn label(self) -> &'static str {
        match self {
            HostClass::Public => "public",
            HostClass::Loopback => "loopback",
            HostClass::Private => "private",
            HostClass::SharedAddressSpace => "shared address space (100.64.0.0/10)",
            HostClass::LinkLocal => "link-local",
            HostClass::UniqueLocal => "unique local",
            HostClass::Unspecified => "unspecified",
            HostClass::Multicast => "multicast",
            HostClass::Reserved => "reserved",
            HostClass::LocalName => "local-only name",
            HostClass::Invalid => "invalid host",
        }
    }
}

/// Classify a host as it appears in a URL authority: a DNS name, an IPv4
/// literal (any legacy form), or a bracketed IPv6 literal (`[::1]`, zone
/// identifier allowed: `[fe80::1%25eth0]`). A bare IPv6 literal without
/// brackets is accepted too. Case and one trailing dot are ignored.
pub fn classify_host(host: &str) -> HostClass {
    if host.is_empty() || host.len() > 253 + 2 {
        return HostClass::Invalid;
    }
    if let Some(inner) = host.strip_prefix('[') {
        let Some(inner) = inner.strip_suffix(']') else {
            return HostClass::Invalid;
        };
        return classify_v6_text(inner);
    }
    if host.contains(':') {
        return classify_v6_text(host);
    }
    let lower = host.to_ascii_lowercase();
    let name = lower.strip_suffix('.').unwrap_or(&lower);
    if name.is_empty() {
        return HostClass::Invalid;
    }
    match parse_ipv4_legacy(name) {
        Ipv4Parse::Addr(a) => return classify_ipv4(a),
        Ipv4Parse::Invalid => return HostClass::Invalid,
        Ipv4Parse::NotIpv4 => {}
    }
    classify_name(name)
}

/// Classify an IPv4 address.
pub fn classify_ipv4(a: Ipv4Addr) -> HostClass {
    let [o0, o1, o2, _] = a.octets();
    match o0 {
        0 => HostClass::Unspecified,
        10 => HostClass::Private,
        100 if (64..=127).contains(&o1) => HostClass::SharedAddressSpace,
        127 => HostClass::Loopback,
        169 if o1 == 254 => HostClass::LinkLocal,
        172 if (16..=31).contains(&o1) => HostClass::Private,
        192 if o1 == 168 => HostClass::Private,
        192 if o1 == 0 && o2 == 0 => HostClass::Reserved,
        198 if o1 == 18 || o1 == 19 => HostClass::Reserved,
        // RFC 5737 documentation ranges: never a real endpoint.
        192 if o1 == 0 && o2 == 2 => HostClass::Reserved,
        198 if o1 == 51 && o2 == 100 => HostClass::Reserved,
        203 if o1 == 0 && o2 == 113 => HostClass::Reserved,
        224..=239 => HostClass::Multicast,
        240..=255 => HostClass::Reserved,
        _ => HostClass::Public,
    }
}

/// Classify an IPv6 address; IPv4-mapped (`::ffff:0:0/96`), IPv4-compatible
/// (`::/96`), NAT64 (`64:ff9b::/96`) and 6to4 (`2002::/16`) addresses are
/// unwrapped and classified as IPv4 (draft-narvaneni-agent-uri-03 section 5.2); Teredo
/// (`2001::/32`), `2001:2::/48`, `64:ff9b:1::/48` and `100::/64` are
/// [`HostClass::Reserved`].
pub fn classify_ipv6(a: Ipv6Addr) -> HostClass {
    let s = a.segments();
    if a.is_unspecified() {
        return HostClass::Unspecified;
    }
    if a.is_loopback() {
        return HostClass::Loopback;
    }
    let embedded = Ipv4Addr::new(
        (s[6] >> 8) as u8,
        (s[6] & 0xff) as u8,
        (s[7] >> 8) as u8,
        (s[7] & 0xff) as u8,
    );
    let mapped = s[0..5] == [0, 0, 0, 0, 0] && s[5] == 0xffff;
    let compatible = s[0..6] == [0, 0, 0, 0, 0, 0];
    let nat64 = s[0] == 0x64 && s[1] == 0xff9b && s[2..6] == [0, 0, 0, 0];
    if mapped || compatible || nat64 {
        return classify_ipv4(embedded);
    }
    // RFC 3056 6to4 `2002::/16`: the relay's IPv4 address is bits 16-47,
    // and a 6to4 address reaches whatever that address reaches.
    if s[0] == 0x2002 {
        let v4 = Ipv4Addr::new(
            (s[1] >> 8) as u8,
            (s[1] & 0xff) as u8,
            (s[2] >> 8) as u8,
            (s[2] & 0xff) as u8,
        );
        return classify_ipv4(v4);
    }
    // RFC 4380 Teredo `2001::/32`: the client's IPv4 address is stored
    // obfuscated (XOR) and the tunnel reaches it through a relay; RFC 6890
    // and the IANA registry mark the prefix not globally reachable. Refused
    // whole rather than unwrapped.
    if s[0] == 0x2001 && s[1] == 0 {
        return HostClass::Reserved;
    }
    // RFC 5180 benchmarking `2001:2::/48` (the IPv6 twin of 198.18/15).
    if s[0] == 0x2001 && s[1] == 2 && s[2] == 0 {
        return HostClass::Reserved;
    }
    // RFC 8215 local-use IPv4/IPv6 translation `64:ff9b:1::/48`: a NAT64
    // inside the operator's network, not globally reachable.
    if s[0] == 0x64 && s[1] == 0xff9b && s[2] == 1 {
        return HostClass::Reserved;
    }
    // RFC 6666 discard-only `100::/64`.
    if s[0] == 0x100 && s[1..4] == [0, 0, 0] {
        return HostClass::Reserved;
    }
    match s[0] {
        x if x & 0xfe00 == 0xfc00 => HostClass::UniqueLocal,
        x if x & 0xffc0 == 0xfe80 => HostClass::LinkLocal,
        x if x & 0xffc0 == 0xfec0 => HostClass::UniqueLocal,
        x if x & 0xff00 == 0xff00 => HostClass::Multicast,
        // RFC 3849 documentation prefix 2001:db8::/32.
        0x2001 if s[1] == 0x0db8 => HostClass::Reserved,
        _ => HostClass::Public,
    }
}

fn classify_v6_text(text: &str) -> HostClass {
    // RFC 6874 zone identifier: "%25eth0" in a URI, "%eth0" elsewhere.
    let addr = match text.find('%') {
        Some(i) => &text[..i],
        None => text,
    };
    match addr.parse::<Ipv6Addr>() {
        Ok(a) => classify_ipv6(a),
        Err(_) => HostClass::Invalid,
    }
}

fn classify_name(name: &str) -> HostClass {
    let valid = name.split('.').all(|label| {
        !label.is_empty()
            && label.len() <= 63
            && label
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    });
    if !valid {
        return HostClass::Invalid;
    }
    if name == "localhost" || name.ends_with(".localhost") {
        return HostClass::Loopback;
    }
    const LOCAL_SUFFIXES: [&str; 4] = [".local", ".internal", ".home.arpa", ".localdomain"];
    if !name.contains('.')
        || LOCAL_SUFFIXES.iter().any(|s| name.ends_with(s))
        || name == "home.arpa"
    {
        return HostClass::LocalName;
    }
    HostClass::Public
}

enum Ipv4Parse {
    Addr(Ipv4Addr),
    NotIpv4,
    Invalid,
}

/// The WHATWG URL IPv4 parser: a host is an IPv4 literal when its last label
/// is a number (decimal, `0x` hex, or `0` octal); then every label must be a
/// number, with at most four parts and the last filling the remaining bytes.
fn parse_ipv4_legacy(name: &str) -> Ipv4Parse {
    let parts: Vec<&str> = name.split('.').collect();
    let Some(last) = parts.last() else {
        return Ipv4Parse::NotIpv4;
    };
    if parse_num(last).is_none() {
        return Ipv4Parse::NotIpv4;
    }
    if parts.len() > 4 {
        return Ipv4Parse::Invalid;
    }
    let mut nums = Vec::with_capacity(4);
    for p in &parts {
        match parse_num(p) {
            Some(n) => nums.push(n),
            None => return Ipv4Parse::Invalid,
        }
    }
    let (head, tail) = nums.split_at(nums.len() - 1);
    if head.iter().any(|&n| n > 255) {
        return Ipv4Parse::Invalid;
    }
    let tail_bits = 8 * (5 - nums.len()) as u32;
    let tail = tail[0];
    if tail_bits < 64 && tail >= (1u64 << tail_bits) {
        return Ipv4Parse::Invalid;
    }
    let mut v: u32 = 0;
    for (i, &n) in head.iter().enumerate() {
        v |= (n as u32) << (24 - 8 * i as u32);
    }
    v |= tail as u32;
    Ipv4Parse::Addr(Ipv4Addr::from(v))
}

fn parse_num(s: &str) -> Option<u64> {
    if s.is_empty() {
        return None;
    }
    let (digits, radix) = if let Some(h) = s.strip_prefix("0x") {
        (h, 16)
    } else if s.len() > 1 && s.starts_with('0') {
        (&s[1..], 8)
    } else {
        (s, 10)
    };
    if digits.is_empty() {
        // "0x" alone is zero in the WHATWG parser.
        return if radix == 16 { Some(0) } else { None };
    }
    if digits.len() > 16 {
        return None;
    }
    u64::from_str_radix(digits, radix).ok()
}

/// The host of an absolute URI (`scheme://[userinfo@]host[:port]/...`), as
/// written (brackets kept for IPv6); `None` when the URI has no authority.
pub fn uri_host(uri: &str) -> Option<&str> {
    let (_, rest) = uri.split_once("://")?;
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let authority = &rest[..end];
    let hostport = match authority.rfind('@') {
        Some(i) => &authority[i + 1..],
        None => authority,
    };
    if hostport.starts_with('[') {
        let close = hostport.find(']')?;
        return Some(&hostport[..=close]);
    }
    Some(match hostport.rfind(':') {
        Some(i) => &hostport[..i],
        None => hostport,
    })
}

/// The scheme of an absolute URI, lowercased (RFC 3986 section 3.1:
/// `ALPHA *( ALPHA / DIGIT / "+" / "-" / "." )`), or `None`.
pub fn uri_scheme(uri: &str) -> Option<String> {
    let (scheme, _) = uri.split_once(':')?;
    let mut b = scheme.bytes();
    let first = b.next()?;
    if !first.is_ascii_alphabetic()
        || !b.all(|c| c.is_ascii_alphanumeric() || c == b'+' || c == b'-' || c == b'.')
    {
        return None;
    }
    Some(scheme.to_ascii_lowercase())
}

#[cfg(test)]
mod tests {
    use super::*;
    use HostClass::*;

    #[test]
    fn every_range_boundary() {
        let table: &[(&str, HostClass)] = &[
            ("0.0.0.0", Unspecified),
            ("0.255.255.255", Unspecified),
            ("1.0.0.0", Public),
            ("9.255.255.255", Public),
            ("10.0.0.0", Private),
            ("10.255.255.255", Private),
            ("11.0.0.0", Public),
            ("100.63.255.255", Public),
            ("100.64.0.0", SharedAddressSpace),
            ("100.127.255.255", SharedAddressSpace),
            ("100.128.0.0", Public),
            ("126.255.255.255", Public),
            ("127.0.0.0", Loopback),
            ("127.255.255.255", Loopback),
            ("128.0.0.0", Public),
            ("169.253.255.255", Public),
            ("169.254.0.0", LinkLocal),
            ("169.254.169.254", LinkLocal),
            ("169.254.255.255", LinkLocal),
            ("169.255.0.0", Public),
            ("172.15.255.255", Public),
            ("172.16.0.0", Private),
            ("172.31.255.255", Private),
            ("172.32.0.0", Public),
            ("191.255.255.255", Public),
            ("192.0.0.0", Reserved),
            ("192.0.0.255", Reserved),
            ("192.0.1.0", Public),
            ("192.167.255.255", Public),
            ("192.168.0.0", Private),
            ("192.168.255.255", Private),
            ("192.169.0.0", Public),
            ("198.17.255.255", Public),
            ("198.18.0.0", Reserved),
            ("198.19.255.255", Reserved),
            ("198.20.0.0", Public),
            ("223.255.255.255", Public),
            ("224.0.0.0", Multicast),
            ("239.255.255.255", Multicast),
            ("240.0.0.0", Reserved),
            ("255.255.255.255", Reserved),
            ("8.8.8.8", Public),
            // IPv6
            ("[::]", Unspecified),
            ("[::1]", Loopback),
            ("::1", Loopback),
            ("[::2]", Unspecified), // ::/96 IPv4-compatible: 0.0.0.2
            ("[fbff:ffff::]", Public),
            ("[fc00::]", UniqueLocal),
            ("[fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff]", UniqueLocal),
            ("[fe00::]", Public),
            ("[fe7f:ffff::]", Public),
            ("[fe80::]", LinkLocal),
            ("[febf:ffff::1]", LinkLocal),
            ("[fec0::]", UniqueLocal),
            ("[feff:ffff::]", UniqueLocal),
            ("[ff00::]", Multicast),
            ("[ff02::1]", Multicast),
            ("[2001:db8::1]", Reserved),
            ("[2001:db9::1]", Public),
            ("192.0.2.1", Reserved),
            ("198.51.100.7", Reserved),
            ("203.0.113.9", Reserved),
            ("192.0.3.1", Public),
            ("[2606:4700::1111]", Public),
            ("[fe80::1%25eth0]", LinkLocal),
            ("[::ffff:127.0.0.1]", Loopback),
            ("[::ffff:7f00:1]", Loopback),
            ("[::ffff:10.0.0.1]", Private),
            ("[::ffff:169.254.169.254]", LinkLocal),
            ("[::ffff:8.8.8.8]", Public),
            ("[::127.0.0.1]", Loopback),
            ("[64:ff9b::192.168.1.1]", Private),
            ("[64:ff9b::8.8.8.8]", Public),
            // RFC 8215 local-use NAT64: refused whatever it embeds.
            ("[64:ff9b:1::10.0.0.1]", Reserved),
            ("[64:ff9b:1::8.8.8.8]", Reserved),
            ("[64:ff9b:1:ffff:ffff:ffff:ffff:ffff]", Reserved),
            ("[64:ff9b:2::8.8.8.8]", Public),
            // RFC 3056 6to4: the embedded IPv4 address decides.
            ("[2002:7f00:1::]", Loopback),
            ("[2002:a00:1::1]", Private),
            ("[2002:a9fe:a9fe::]", LinkLocal),
            ("[2002:c0a8:101:1::1]", Private),
            ("[2002:0:0::1]", Unspecified),
            ("[2002:808:808::1]", Public),
            ("[2002:ffff:ffff:ffff:ffff:ffff:ffff:ffff]", Reserved),
            // RFC 4380 Teredo 2001::/32: refused whole (the client IPv4 is
            // obfuscated; 2001:0:4136:e378:8000:63bf:3fff:fdd2 embeds a
            // public server and client).
            ("[2001::]", Reserved),
            ("[2001:0:4136:e378:8000:63bf:3fff:fdd2]", Reserved),
            ("[2001:0:ffff:ffff:ffff:ffff:ffff:ffff]", Reserved),
            ("[2001:1::1]", Public),
            // RFC 5180 benchmarking 2001:2::/48.
            ("[2001:2::1]", Reserved),
            ("[2001:2:0:ffff::1]", Reserved),
            ("[2001:2:1::1]", Public),
            // RFC 6666 discard-only 100::/64.
            ("[100::]", Reserved),
            ("[100::ffff:ffff:ffff:ffff]", Reserved),
            ("[100::1:0:0:0:1]", Public),
            ("[100:0:0:1::]", Public),
            // legacy IPv4 forms
            ("2130706433", Loopback),
            ("0x7f.1", Loopback),
            ("0x7f000001", Loopback),
            ("017700000001", Loopback),
            ("127.1", Loopback),
            ("10.1", Private),
            ("0", Unspecified),
            ("4294967296", Invalid),
            ("256.0.0.1", Invalid),
            ("1.2.3.4.5", Invalid),
            ("08.0.0.1", Invalid),
            // names
            ("localhost", Loopback),
            ("LOCALHOST.", Loopback),
            ("api.localhost", Loopback),
            ("printer.local", LocalName),
            ("metadata.google.internal", LocalName),
            ("nas.home.arpa", LocalName),
            ("box.localdomain", LocalName),
            ("intranet", LocalName),
            ("example.com", Public),
            ("local.example.com", Public),
            ("localhost.example.com", Public),
            ("example.com.", Public),
            ("1.2.3.example", Public),
            ("", Invalid),
            ("[::1", Invalid),
            ("exa mple.com", Invalid),
            ("a..b", Invalid),
            ("[not-ip]", Invalid),
        ];
        for (host, want) in table {
            assert_eq!(classify_host(host), *want, "host {host:?}");
        }
    }

    #[test]
    fn uri_parts() {
        assert_eq!(uri_host("https://a.example:8443/x"), Some("a.example"));
        assert_eq!(uri_host("https://u:p@[::1]:80/"), Some("[::1]"));
        assert_eq!(uri_host("https://h?q"), Some("h"));
        assert_eq!(uri_host("mailto:x"), None);
        assert_eq!(uri_scheme("HTTPS://x").as_deref(), Some("https"));
        assert_eq!(uri_scheme("agent+wss://x").as_deref(), Some("agent+wss"));
        assert_eq!(uri_scheme("1x://"), None);
    }
}
