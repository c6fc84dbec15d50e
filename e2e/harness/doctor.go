package harness

// Doctor runs "tasksessiond doctor" of the host name in Project with the
// flags setup was given (--bin where the Host records the bridge), and
// returns its combined output; an error when it exits 1.
func (h *Host) Doctor(name string) (string, error) {
	args := []string{"doctor", name, "--socket", h.Daemon.Socket, "--db", h.Daemon.DB}
	if h.Rec != nil {
		args = append(args, "--bin", h.Rec.Bin)
	}
	return h.RunTSD(args)
}
