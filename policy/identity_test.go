package policy

import "testing"

// TestVerifiedIdentityKeys: by_client keys "user:", "group:" and "scope:"
// match the verified identity, never a client that names itself so.
func TestVerifiedIdentityKeys(t *testing.T) {
	p := polFixture{
		Tools: Rules{Deny: []string{"*__delete_*"}, Allow: []string{"fs__*"}},
		ByClient: map[string]Rules{
			"group:admins":         {AlsoAllow: []string{"github__*"}},
			"user:bob@example.com": {Deny: []string{"fs__write_*"}},
			"scope:slack.*":        {AlsoAllow: []string{"group:slack"}},
			"user:*":               {Deny: []string{"fs__status"}},
		},
	}.compile(t)
	alice := Subject{User: "alice@example.com", Groups: []string{"admins"}}
	polWant(t, polDecisions(p, alice), "github__create_issue", true, `allowed by tools.by_client."group:admins".also_allow "github__*"`)
	polWant(t, polDecisions(p, alice), "github__delete_repo", false, `denied by tools.deny "*__delete_*"`)
	polWant(t, polDecisions(p, alice), "fs__status", false, `denied by tools.by_client."user:*".deny "fs__status"`)
	bob := Subject{User: "Bob@Example.com", Scopes: []string{"slack.write"}}
	polWant(t, polDecisions(p, bob), "github__create_issue", false, `denied: not matched by tools.allow`)
	polWant(t, polDecisions(p, bob), "slack__post_message", true, `allowed by tools.by_client."scope:slack.*".also_allow "group:slack"`)
	// A client calling itself "group:admins" or "user:bob@example.com" is
	// a client name, not an identity.
	for _, name := range []string{"group:admins", "user:bob@example.com", "admins"} {
		polWant(t, polDecisions(p, Subject{ClientName: name}), "github__create_issue", false, `denied: not matched by tools.allow`)
		polWant(t, polDecisions(p, Subject{ClientName: name}), "fs__status", true, `allowed by tools.allow "fs__*"`)
	}
	// Verified layers widen; a client-name layer on top only narrows.
	aliceCursor := Subject{ClientName: "cursor", User: "alice@example.com", Groups: []string{"admins"}}
	polWant(t, polDecisions(p, aliceCursor), "github__create_issue", true, `allowed by tools.by_client."group:admins".also_allow "github__*"`)
	if d := polDecisions(p, aliceCursor)["slack__post_message"]; d.Allowed {
		t.Fatalf("client-name layer widened: %+v", d)
	}
	// Views stay bounded by the config: two users matching the same keys share one.
	if p.View(Subject{User: "x1"}) != p.View(Subject{User: "x2"}) {
		t.Fatal("views per user")
	}
}
