package policy

import "strings"

// Verified-identity keys of tools.by_client. A by_client key
// of the form "user:PATTERN", "group:PATTERN" or "scope:PATTERN" matches
// the identity the HTTP front verified from an OAuth access token
// (Subject.User, Subject.Groups, Subject.Scopes), never the client's
// self-declared clientInfo.name; every other key matches the client name.
// PATTERN is a glob of the same dialect, case-insensitive. Unlike client
// names, verified identities cannot be chosen by the client, so such a
// layer is a boundary like an endpoint.
const (
	keyUser  = "user:"
	keyGroup = "group:"
	keyScope = "scope:"
)

// keyKind splits a by_client key into what it matches ("client", "user",
// "group" or "scope") and the lower-case pattern.
func keyKind(key string) (kind, pattern string) {
	low := strings.ToLower(key)
	for _, k := range []string{keyUser, keyGroup, keyScope} {
		if p, ok := strings.CutPrefix(low, k); ok {
			return strings.TrimSuffix(k, ":"), p
		}
	}
	return "client", low
}

// Verified reports whether the layer's key names a verified identity.
func (cl *clientLayer) Verified() bool { return cl.kind != "client" }

// matches reports whether the by_client layer applies to s (lowName is
// s.ClientName in lower case).
func (cl *clientLayer) matches(s Subject, lowName string) bool {
	one := func(v string) bool {
		v = strings.ToLower(v)
		if cl.exact {
			return cl.pattern == v
		}
		return matchLower(cl.pattern, v)
	}
	switch cl.kind {
	case "user":
		return s.User != "" && one(s.User)
	case "group":
		for _, g := range s.Groups {
			if one(g) {
				return true
			}
		}
		return false
	case "scope":
		for _, g := range s.Scopes {
			if one(g) {
				return true
			}
		}
		return false
	}
	return one(lowName)
}

// subjectFor is the representative subject of a by_client key (Subjects).
func (cl *clientLayer) subjectFor() Subject {
	switch cl.kind {
	case "user":
		return Subject{User: cl.pattern}
	case "group":
		return Subject{Groups: []string{cl.pattern}}
	case "scope":
		return Subject{Scopes: []string{cl.pattern}}
	}
	return Subject{ClientName: cl.key}
}
