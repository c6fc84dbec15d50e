package fsck

import (
	"errors"

	"github.com/tasksessiond/tasksessiond"
)

// The log's chain, checked as the daemon checks it when it loads a
// session: a session whose chain breaks is one the daemon refuses, and
// its log, which is the truth, cannot be trusted to rebuild anything, so
// repair leaves it as it is.

// chainRow checks the next row of k's log against the chain.
func (k *checker) chainRow(row *tasksessiond.Call) {
	if k.chain == nil || k.chainBroken {
		return
	}
	k.chainFailed(k.chain.Row(row))
}

// chainEnd checks that k's log ends at its recorded head.
func (k *checker) chainEnd() {
	if k.chain == nil || k.chainBroken {
		return
	}
	k.chainFailed(k.chain.End())
}

func (k *checker) chainFailed(err error) {
	var broken *tasksessiond.BrokenLogError
	if !errors.As(err, &broken) {
		return
	}
	k.chainBroken = true
	k.problem(true, "%s (checksum chain broken at seq %d): the daemon refuses this session; repair changes nothing of it: restore a backup taken before the damage to get it back",
		broken.What, broken.Seq)
}
