package upstream

// Relist asks every session of upstream name — the shared one and the
// per-client ones — to list its tools again, as after
// notifications/tools/list_changed, so that the ingest pipeline runs over
// them again (e.g. after a changed tool definition was approved). It does not wait for the listing. It returns false for an
// unknown upstream or one with no live session.
func (m *Manager) Relist(name string) bool {
	c, ok := m.conns[name]
	asked := false
	if ok {
		c.mu.Lock()
		l := c.cur
		c.mu.Unlock()
		if l != nil {
			l.requestRelist()
			asked = true
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for cc := range m.perClient {
		if cc.c.name == name && cc.l != nil {
			cc.l.requestRelist()
			asked = true
		}
	}
	return asked
}
