package testenv

import "slices"

// SameElements reports whether a and b hold the same strings, each as many times, in any order
// (records read from several partitions, deliveries made concurrently).
func SameElements(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}
