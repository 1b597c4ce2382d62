package check

// NoStores skips the store checks on a bundle that holds no store.
func NoStores(p *Pass) string {
	for _, s := range p.Model.Servers {
		if s.StoreDir != "" {
			return ""
		}
	}
	return "the bundle holds no server's store"
}
