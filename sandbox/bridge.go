package sandbox

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
)

// readMessages reads the worker's stdout, one JSON message per line of at
// most lineMax bytes, into w.msgs until EOF, a bad line, or the parent
// abandons the run. A line that is too long or not a JSON message kills
// the worker (w.readErr says why) and ends the stream: the parent then
// reports the worker dead.
//
// Trust: the worker runs model-written code; the parent treats everything
// it sends as untrusted (docs/security.md). A line is never buffered past
// lineMax (readLine stops at the limit).
func (w *worker) readMessages(out io.ReadCloser, lineMax int) {
	defer out.Close()
	defer close(w.msgs)
	br := bufio.NewReaderSize(out, 64<<10)
	for {
		line, err := readLine(br, lineMax)
		if err != nil {
			if err != io.EOF {
				w.readErr = err
				w.kill()
			}
			return
		}
		var m message
		if err := json.Unmarshal(line, &m); err != nil {
			w.readErr = fmt.Errorf("bad message from worker: %w", err)
			w.kill()
			return
		}
		select {
		case w.msgs <- m:
		case <-w.abandoned:
			return
		}
	}
}
