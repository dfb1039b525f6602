// Package mirrorjson holds the two JSON documents of the provider network
// mirror protocol, read by source/mirror's network mirror and written by
// source/cache/mirrorserve, so that both sides speak one definition.
//
// The protocol: GET BASE/HOST/NAMESPACE/TYPE/index.json lists the versions
// (an object whose keys are versions, each value an object kept for future
// use); GET BASE/HOST/NAMESPACE/TYPE/VERSION.json lists each platform's
// archive, its URL relative to the document and, optionally, its hashes.
package mirrorjson

import "encoding/json"

// Index is index.json. A version's value is kept raw: the protocol reserves
// it, so a reader accepts any JSON value there and a writer writes {}.
type Index struct {
	Versions map[string]json.RawMessage `json:"versions"`
}

// Empty is the value a writer gives each version of an [Index].
var Empty = json.RawMessage("{}")

// Version is VERSION.json: each platform ("os_arch") names its archive.
type Version struct {
	Archives map[string]Archive `json:"archives"`
}

// Archive is one platform's archive in a [Version]: its URL, relative to
// the document's, and the hashes the mirror vouches for ("h1:…", "zh:…"),
// left out when it lists none.
type Archive struct {
	URL    string   `json:"url"`
	Hashes []string `json:"hashes,omitempty"`
}
