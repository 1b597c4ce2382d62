package model

// AnsweredCapture says whether a server answered a monitoring request of the
// bundle (it was running when the captures were taken).
func AnsweredCapture(s *Server) bool {
	for k := range s.Sources {
		if k != "log" && k != "store" {
			return true
		}
	}
	return false
}
