package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// The API commands' config file: a place for the token that is neither the shell's history nor
// its environment. It holds `key = value` lines (admin_url, api_key, admin_token, partner; # starts
// a comment). A flag wins over a variable, a variable over the file. The file is refused when
// its permissions let the group or others read it, as ssh refuses a readable private key.

// configKeys maps a key of the file to the flag it stands in for.
var configKeys = map[string]string{
	"admin_url":   "admin-url",
	"api_key":     "api-key",
	"admin_token": "admin-token",
	"partner":     "partner",
}

// configFilePath is HOOKSTREAM_CONFIG, else ~/.config/hookstream/config; required reports
// whether it was named (a named file must exist, the default one may not).
func configFilePath() (path string, required bool) {
	if p, ok := os.LookupEnv("HOOKSTREAM_CONFIG"); ok && p != "" {
		return p, true
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", false
	}
	return filepath.Join(home, ".config", "hookstream", "config"), false
}

// readConfigFile reads the config file at path into key → value; a missing file not required is
// empty.
func readConfigFile(path string, required bool) (map[string]string, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) && !required {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("config file: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("config file %s: %w", path, err)
	}
	if perm := st.Mode().Perm(); perm&0o077 != 0 {
		return nil, fmt.Errorf("config file %s: its permissions %04o let others than its owner read it, and it holds a token: chmod 600 %s",
			path, perm, path)
	}
	values := map[string]string{}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		key, value, ok := strings.Cut(line, "=")
		key, value = strings.TrimSpace(key), strings.TrimSpace(value)
		if !ok || key == "" {
			return nil, fmt.Errorf("config file %s:%d: want key = value", path, n)
		}
		if _, known := configKeys[key]; !known {
			return nil, fmt.Errorf("config file %s:%d: unknown key %q, want admin_url, api_key, admin_token or partner", path, n, key)
		}
		if len(value) >= 2 && value[0] == '"' && value[len(value)-1] == '"' {
			value = value[1 : len(value)-1]
		}
		values[key] = value
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("config file %s: %w", path, err)
	}
	return values, nil
}

// withConfigFile fills in s and partner from the config file what no flag and no variable set.
// The token is one setting: a token given by a flag or a variable (either kind) leaves both of
// the file's aside, so a variable always wins over the file.
func withConfigFile(fs *commandFlags, s settings, partner string) (settings, string, error) {
	path, required := configFilePath()
	if path == "" {
		return s, partner, nil
	}
	values, err := readConfigFile(path, required)
	if err != nil || len(values) == 0 {
		return s, partner, err
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	set := func(name string) bool { return given[name] || fs.env[name] }
	if v, ok := values["admin_url"]; ok && !set("admin-url") {
		s.AdminURL = v
	}
	if !set("api-key") && !set("admin-token") {
		s.APIKey, s.AdminToken = values["api_key"], values["admin_token"]
	}
	if v, ok := values["partner"]; ok && !given["partner"] {
		partner = v
	}
	return s, partner, nil
}
