package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/swmgr/swmgr/internal/datadir"
	"github.com/swmgr/swmgr/internal/secrets"
	"github.com/swmgr/swmgr/internal/store"
)

// Start-up integrity of the data directory beyond the database file itself
// (which store.Open checks): swmgr never silently starts as a new switch
// over a data directory that lost a part, nor with a key that is not the
// database's.

const (
	dbFile        = datadir.DB
	secretKeyFile = datadir.SecretKey
	// keyCheckPlain is what the check value seals: only the right key
	// opens it.
	keyCheckPlain = "swmgr secret.key check"
)

// keyCheckAD binds the check value to its purpose.
var keyCheckAD = []byte("secret-key-check")

const restoreDirHint = "swmgr has changed nothing. Restore the missing file from a backup of the data directory; or, to start this switch anew, move the data directory away and load a saved configuration (POST /public/v1/action/ResetConfigToFile)"

// madeByAStart are files that only a start of swmgr makes in its data
// directory (secret.key and startup-config may be put into a new one to
// provision a switch).
var madeByAStart = []string{filepath.Join(accountsDir, "passwd"), datadir.TLSKey, initialPasswordFile}

// checkDataDir runs before anything in dir is opened: a directory that was
// in use but whose database is gone would otherwise become a new switch,
// all configuration and history lost.
func checkDataDir(dir string) error {
	if _, err := os.Stat(filepath.Join(dir, dbFile)); !errors.Is(err, os.ErrNotExist) {
		return nil
	}
	for _, name := range madeByAStart {
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			return fmt.Errorf("%s: %s is missing, but the directory was in use (%s exists): all configuration and history would be lost; swmgr does not start a new switch here. %s", dir, dbFile, name, restoreDirHint)
		}
	}
	return nil
}

// openSecrets opens the secret key and checks that it is the database's:
// the database keeps a value sealed with it (written at its first start),
// so a missing, replaced or short key is found at start, not as a 500 on
// the first object with a sealed secret. inUse reports whether the
// database had been started before.
func openSecrets(dir string, st *store.Store) (box *secrets.Box, inUse bool, err error) {
	check, err := st.KeyCheck()
	if err != nil {
		return nil, false, err
	}
	keyPath := filepath.Join(dir, secretKeyFile)
	if check != nil {
		if _, err := os.Stat(keyPath); errors.Is(err, os.ErrNotExist) {
			return nil, true, fmt.Errorf("%s is missing: the database's sealed secrets (archive server passwords) cannot be read without it, and a new key would not open them. %s", keyPath, restoreDirHint)
		}
	}
	if box, err = secrets.Open(dir); err != nil {
		return nil, check != nil, fmt.Errorf("%w. %s", err, restoreDirHint)
	}
	if check == nil {
		return box, false, st.SetKeyCheck(box.Seal([]byte(keyCheckPlain), keyCheckAD))
	}
	if plain, err := box.Unseal(check, keyCheckAD); err != nil || string(plain) != keyCheckPlain {
		return nil, true, fmt.Errorf("%s is not the key of this database (it was replaced or changed): the database's sealed secrets cannot be read with it. %s", keyPath, restoreDirHint)
	}
	return box, true, nil
}

// checkAccounts refuses a data directory in use whose simulated switch
// lost its account files: new ones would hold no User, and nobody could
// log in.
func checkAccounts(dir string, inUse bool) error {
	if !inUse {
		return nil
	}
	if _, err := os.Stat(filepath.Join(dir, accountsDir, "passwd")); errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("%s is missing while the database is in use: the switch's accounts (every User's login) would be lost. %s", filepath.Join(dir, accountsDir, "passwd"), restoreDirHint)
	}
	return nil
}
