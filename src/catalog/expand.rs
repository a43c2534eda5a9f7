//! A catalog as a source of inputs for bulk verification (`verify
//! --batch`): each entry becomes one [`CatalogInput`], to be verified as its
//! media type by the caller (an entry by `url` exactly as that URL alone
//! would be). Nested catalogs are followed under the bounds of a catalog
//! verification ([`CatalogOptions`]: levels, entries, fetches), a cycle
//! refused (AI Catalog "Nested Catalog Depth and Circular References"); a
//! nested catalog is expanded, never an input of its own.

use super::verify::{parse_catalog, CatalogOptions, Fetch};
use super::{media_type_is, MEDIA_TYPE};
use serde_json::Value;

/// One entry of an expanded catalog.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct CatalogInput {
    /// Where the entry is: `CATALOG#/entries/N` (`CATALOG` the catalog's
    /// URL, or the name it was given).
    pub pointer: String,
    /// Its `identifier`.
    pub identifier: Option<String>,
    /// Its media type (`mediaType` or `type`).
    pub media_type: Option<String>,
    /// Its `url`; `None` for an inline entry (`data`).
    pub url: Option<String>,
    /// Why it is refused without being verified (a nested catalog too
    /// deep, a cycle, a catalog that could not be fetched or read, too
    /// many entries).
    pub refused: Option<String>,
}

/// Whether `url` names a catalog by its form: an `https` URL whose path
/// ends with `/ai-catalog.json` (the well-known `/.well-known/ai-catalog.json`,
/// AI Catalog "Well-Known URI", or any catalog named so).
pub fn is_catalog_url(url: &str) -> bool {
    let path = url.split(['?', '#']).next().unwrap_or(url);
    path.starts_with("https://") && path.ends_with("/ai-catalog.json")
}

/// Whether `document` is an AI Catalog by its content, as `verify FILE`
/// detects it ([`crate::formats::detect_bytes`]); a document without a
/// `"specVersion"` member name anywhere is not parsed for it.
pub fn is_catalog_document(document: &[u8]) -> bool {
    document.windows(13).any(|w| w == b"\"specVersion\"")
        && matches!(
            crate::formats::detect_bytes(document),
            Ok((crate::formats::Format::AiCatalog, _))
        )
}

/// Expand the catalog `doc`, named `name` (its URL when it was fetched:
/// the root of cycle detection), into one [`CatalogInput`] per entry,
/// nested catalogs included (by `url` fetched through `fetch`; without
/// one, a nested catalog by URL is refused as not fetched).
pub fn expand_catalog<'a>(
    doc: &Value,
    name: &str,
    fetch: Option<&'a mut dyn Fetch>,
    opts: &'a CatalogOptions,
) -> Vec<CatalogInput> {
    let mut x = Expand {
        fetch,
        opts,
        out: Vec::new(),
        path: vec![name.to_owned()],
        done: std::iter::once(name.to_owned()).collect(),
        fetches: 0,
    };
    x.catalog(doc, &format!("{name}#"), 1);
    x.out
}

struct Expand<'a> {
    fetch: Option<&'a mut dyn Fetch>,
    opts: &'a CatalogOptions,
    out: Vec<CatalogInput>,
    path: Vec<String>,
    done: std::collections::BTreeSet<String>,
    fetches: usize,
}

impl Expand<'_> {
    fn refuse(&mut self, pointer: String, entry: Option<&Value>, why: String) {
        let s = |k: &str| {
            entry
                .and_then(|e| e.get(k))
                .and_then(Value::as_str)
                .map(str::to_owned)
        };
        let media_type = entry
            .and_then(Value::as_object)
            .and_then(|o| crate::formats::entry_media_type(o).ok().flatten())
            .map(str::to_owned);
        self.out.push(CatalogInput {
            pointer,
            identifier: s("identifier"),
            media_type,
            url: s("url"),
            refused: Some(why),
        });
    }

    fn catalog(&mut self, doc: &Value, base: &str, depth: usize) {
        let Some(entries) = doc.get("entries").and_then(Value::as_array) else {
            self.refuse(
                base.to_owned(),
                None,
                "not an AI Catalog: no \"entries\" array".into(),
            );
            return;
        };
        for (i, entry) in entries.iter().enumerate() {
            let pointer = format!("{base}/entries/{i}");
            if self.out.len() >= self.opts.max_entries {
                self.refuse(
                    pointer,
                    None,
                    format!(
                        "more than {} entries in all: the rest are not expanded",
                        self.opts.max_entries
                    ),
                );
                return;
            }
            let Some(obj) = entry.as_object() else {
                self.refuse(pointer, None, "the entry is not an object".into());
                continue;
            };
            let media_type = crate::formats::entry_media_type(obj).ok().flatten();
            let nested = media_type.is_some_and(|m| media_type_is(m, MEDIA_TYPE));
            if !nested {
                self.out.push(CatalogInput {
                    pointer,
                    identifier: obj
                        .get("identifier")
                        .and_then(Value::as_str)
                        .map(str::to_owned),
                    media_type: media_type.map(str::to_owned),
                    url: obj.get("url").and_then(Value::as_str).map(str::to_owned),
                    refused: None,
                });
                continue;
            }
            if depth >= self.opts.max_depth {
                self.refuse(
                    pointer,
                    Some(entry),
                    format!(
                        "a nested catalog at level {} is deeper than the {}-level limit (AI Catalog ADR 0001): not expanded",
                        depth + 1,
                        self.opts.max_depth
                    ),
                );
                continue;
            }
            match (obj.get("data"), obj.get("url").and_then(Value::as_str)) {
                (Some(data), _) => self.catalog(data, &format!("{pointer}/data"), depth + 1),
                (None, Some(url)) => self.nested_url(url, pointer, entry, depth),
                (None, None) => {
                    self.refuse(pointer, Some(entry), "neither url nor data".into());
                }
            }
        }
    }

    fn nested_url(&mut self, url: &str, pointer: String, entry: &Value, depth: usize) {
        let q = crate::text::quoted;
        if self.path.iter().any(|p| p == url) {
            let why = format!(
                "cycle: the nested catalog {} is one of the catalogs that contain it (AI Catalog \"Nested Catalog Entries\")",
                q(url)
            );
            return self.refuse(pointer, Some(entry), why);
        }
        if !self.done.insert(url.to_owned()) {
            return; // expanded above already
        }
        if self.fetches >= self.opts.max_fetches {
            let why = format!(
                "not fetched: the {}-fetch limit is reached",
                self.opts.max_fetches
            );
            return self.refuse(pointer, Some(entry), why);
        }
        self.fetches += 1;
        let got = match self.fetch.as_deref_mut() {
            Some(f) => f.fetch(url, MEDIA_TYPE),
            None => Err("nested catalogs by url are not fetched here".into()),
        };
        let doc = match got.and_then(|b| parse_catalog(&b, self.opts).map_err(|e| e.to_string())) {
            Ok(d) => d,
            Err(e) => {
                return self.refuse(
                    pointer,
                    Some(entry),
                    format!("nested catalog {}: {e}", q(url)),
                )
            }
        };
        self.path.push(url.to_owned());
        self.catalog(&doc, &format!("{url}#"), depth + 1);
        self.path.pop();
    }
}

/// How bulk verification checks one [`CatalogInput`].
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum EntryCheck<'a> {
    /// Verify the URL exactly as `verify URL` alone does: an A2A Agent Card
    /// by its embedded signatures, an MCP Server Card or any other JSON
    /// document by its response signature and detached JWS.
    VerifyUrl(&'a str),
    /// Not checked, and why: an inline entry (its verdict is the
    /// catalog's own, `verify CATALOG`), or a media type agentsig does not
    /// verify (opaque to the catalog: never a failure).
    NotChecked(String),
    /// Refused, and why ([`CatalogInput::refused`]).
    Refused(&'a str),
}

impl CatalogInput {
    /// How this entry is checked: by its media type (AI Catalog "Catalog
    /// Entry": A2A Agent Cards and MCP Server Cards are the well-known
    /// types; anything else is opaque to the catalog).
    pub fn check(&self) -> EntryCheck<'_> {
        if let Some(why) = &self.refused {
            return EntryCheck::Refused(why);
        }
        let Some(url) = &self.url else {
            return EntryCheck::NotChecked(
                "an inline entry: verify the catalog itself to check it".into(),
            );
        };
        let mt = self.media_type.as_deref().unwrap_or("");
        let essence = mt
            .split(';')
            .next()
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase();
        if media_type_is(mt, super::A2A_CARD_MEDIA_TYPE)
            || media_type_is(mt, super::MCP_SERVER_CARD_MEDIA_TYPE)
            || essence == "application/json"
            || essence.ends_with("+json")
        {
            EntryCheck::VerifyUrl(url)
        } else {
            EntryCheck::NotChecked(format!(
                "{}: a media type agentsig does not verify (opaque to the catalog)",
                if mt.is_empty() { "no media type" } else { mt }
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::collections::HashMap;

    /// Documents by URL; counts the fetches.
    struct Map(HashMap<String, Vec<u8>>, usize);
    impl Fetch for Map {
        fn fetch(&mut self, url: &str, _accept: &str) -> Result<Vec<u8>, String> {
            self.1 += 1;
            self.0.get(url).cloned().ok_or_else(|| "404".into())
        }
    }

    fn nested(url: &str) -> Value {
        json!({"identifier": url, "displayName": "N", "mediaType": MEDIA_TYPE, "url": url})
    }

    /// A chain of catalogs by URL is expanded to level 4; the catalog at
    /// level 5 is refused without being fetched.
    #[test]
    fn nesting_stops_at_level_four_and_level_five_is_not_fetched() {
        let mut docs = HashMap::new();
        for i in 2..=6 {
            let next = format!("https://h.example/{}.json", i + 1);
            let doc = json!({"specVersion": "1.0", "entries": [nested(&next),
                {"identifier": format!("urn:card{i}"), "displayName": "C", "type": crate::catalog::MCP_SERVER_CARD_MEDIA_TYPE,
                 "url": format!("https://h.example/card{i}.json")}]});
            docs.insert(
                format!("https://h.example/{i}.json"),
                doc.to_string().into_bytes(),
            );
        }
        let root = json!({"specVersion": "1.0", "entries": [nested("https://h.example/2.json")]});
        let mut f = Map(docs, 0);
        let got = expand_catalog(
            &root,
            "https://h.example/1.json",
            Some(&mut f),
            &CatalogOptions::default(),
        );
        let cards: Vec<_> = got.iter().filter(|i| i.refused.is_none()).collect();
        assert_eq!(cards.len(), 3, "levels 2 to 4: {got:?}");
        let refused: Vec<_> = got.iter().filter_map(|i| i.refused.as_deref()).collect();
        assert_eq!(refused.len(), 1, "{got:?}");
        assert!(refused[0].contains("level 5"), "{refused:?}");
        assert_eq!(f.1, 3, "only levels 2 to 4 fetched");
    }

    #[test]
    fn entries_are_checked_by_media_type() {
        let doc = json!({"specVersion": "1.0", "entries": [
            {"identifier": "a", "displayName": "A", "mediaType": "application/a2a-agent-card+json", "url": "https://h.example/a"},
            {"identifier": "b", "displayName": "B", "type": "application/mcp-server-card+json", "url": "https://h.example/b"},
            {"identifier": "c", "displayName": "C", "mediaType": "application/zip", "url": "https://h.example/c"},
            {"identifier": "d", "displayName": "D", "mediaType": "application/zip", "data": {}}]});
        let got = expand_catalog(&doc, "cat.json", None, &CatalogOptions::default());
        let checks: Vec<_> = got.iter().map(CatalogInput::check).collect();
        assert_eq!(checks[0], EntryCheck::VerifyUrl("https://h.example/a"));
        assert_eq!(checks[1], EntryCheck::VerifyUrl("https://h.example/b"));
        assert!(matches!(&checks[2], EntryCheck::NotChecked(m) if m.contains("application/zip")));
        assert!(matches!(&checks[3], EntryCheck::NotChecked(m) if m.contains("inline")));
        assert_eq!(got[0].pointer, "cat.json#/entries/0");
        // Without a fetcher, a nested catalog by URL is refused, not skipped.
        let doc = json!({"specVersion": "1.0", "entries": [nested("https://h.example/n.json")]});
        let got = expand_catalog(&doc, "cat.json", None, &CatalogOptions::default());
        assert!(matches!(got[0].check(), EntryCheck::Refused(_)));
    }
}
