package egress_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/hookstream/hookstream/egress"
)

// The admin API checks a callback URL at registration and answers 422 with the refusing rule.
// IP literals need no DNS, so this example runs offline.
func ExampleGuard_CheckURL() {
	guard, err := egress.New(egress.DefaultConfig())
	if err != nil {
		panic(err)
	}
	for _, u := range []string{
		"http://203.0.113.10/hooks",
		"https://203.0.113.10:22/hooks",
		"https://10.0.0.7/hooks",
		"https://[::ffff:169.254.169.254]/latest",
		"https://0x7f.0.0.1/",
	} {
		err := guard.CheckURL(context.Background(), u)
		var pe *egress.PolicyError
		if errors.As(err, &pe) {
			fmt.Printf("%-8s %s\n", pe.Rule, pe.Detail)
		}
	}
	// Output:
	// scheme   plain http is not allowed; use https
	// port     port 22 is not allowed (allowed: 443, 8443)
	// blocked_address 10.0.0.7 is private
	// metadata 169.254.169.254 is the instance metadata service (AWS, GCP, Azure, OCI, ...)
	// host     host "0x7f.0.0.1" is a non-standard IPv4 address; write it as a.b.c.d
}

// The sender builds one client per process; a refusal at connection time is recognised with
// errors.Is and recorded as the blocked_destination category.
func ExampleGuard_Client() {
	guard, err := egress.New(egress.DefaultConfig())
	if err != nil {
		panic(err)
	}
	client := guard.Client()
	_, err = client.Post("https://192.168.1.20/hooks", "application/json", nil)
	fmt.Println(errors.Is(err, egress.ErrBlockedDestination))
	// Output: true
}
