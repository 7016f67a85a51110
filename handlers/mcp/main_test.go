package mcp_test

import (
	"testing"

	"github.com/osfoundry/osfoundry/store/storetest"
)

func TestMain(m *testing.M) { storetest.Main(m) }
