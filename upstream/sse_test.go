package upstream

import (
	"strings"
	"testing"
)

func TestReadSSE(t *testing.T) {
	big := `{"jsonrpc":"2.0","result":{"t":"` + strings.Repeat("x", 5000) + `"},"id":42}`
	in := ": comment\r\n" +
		"event: ping\r\ndata: \r\n\r\n" +
		"id: 7\ndata: {\"a\":\ndata: 1}\n\n" +
		"retry: 1500\n\n" +
		"data: " + big + "\n\n" +
		"data: {\"b\":2}\n\n"
	var got []string
	err := readSSE(strings.NewReader(in), 1024, func(ev *sseEvent) bool {
		switch {
		case ev.Oversize:
			got = append(got, "oversize:"+string(ev.Sniff.id()))
		default:
			got = append(got, ev.Name+"|"+ev.ID+"|"+string(ev.Data))
		}
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"ping||", "|7|{\"a\":\n1}", "oversize:42", "|7|{\"b\":2}"}
	if strings.Join(got, " ; ") != strings.Join(want, " ; ") {
		t.Fatalf("got  %q\nwant %q", got, want)
	}
}
