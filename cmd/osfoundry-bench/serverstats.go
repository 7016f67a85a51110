package main

import (
	"bufio"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// requestStatements is the server's series counting the statements it sends
// to PostgreSQL while serving requests (background work has its own origin).
const requestStatements = `osfoundry_db_statements_total{origin="request"}`

// pollStatements runs 200 unchanged polls and reads the server's own count
// of statements sent while serving requests before and after.
func (fx *fixture) pollStatements() (int64, error) {
	if fx.pollURL == "" || fx.metricsURL == "" {
		return 0, errors.New("no poll URL or no operations listener (--ops-addr)")
	}
	if err := fx.loadPollURL(); err != nil {
		return 0, err
	}
	before, err := fx.statements()
	if err != nil {
		return 0, err
	}
	for range 200 {
		if err := fx.poll(); err != nil {
			return 0, err
		}
	}
	after, err := fx.statements()
	if err != nil {
		return 0, err
	}
	return after - before, nil
}

// statements reads requestStatements from the server's /metrics.
func (fx *fixture) statements() (int64, error) {
	res, err := http.Get(fx.metricsURL)
	if err != nil {
		return 0, err
	}
	defer res.Body.Close()
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), requestStatements+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			return int64(f), err
		}
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("%s: no %s", fx.metricsURL, requestStatements)
}
