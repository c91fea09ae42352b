package graph

// topoOrder returns the ids of steps in a topological order that keeps
// document order among steps that do not depend on each other (Kahn's
// algorithm, always taking the earliest ready step). Dependencies on
// unknown steps are ignored; steps on a cycle are left out.
func topoOrder(steps []*Step) []string {
	pos := make(map[string]int, len(steps))
	for i, s := range steps {
		pos[s.ID] = i
	}
	waiting := make([]int, len(steps))
	dependents := make([][]int, len(steps))
	for i, s := range steps {
		for _, dep := range s.DependsOn {
			if j, ok := pos[dep]; ok && j != i {
				waiting[i]++
				dependents[j] = append(dependents[j], i)
			}
		}
	}
	done := make([]bool, len(steps))
	order := make([]string, 0, len(steps))
	for len(order) < len(steps) {
		next := -1
		for i := range steps {
			if !done[i] && waiting[i] == 0 {
				next = i
				break
			}
		}
		if next < 0 {
			break
		}
		done[next] = true
		order = append(order, steps[next].ID)
		for _, d := range dependents[next] {
			waiting[d]--
		}
	}
	return order
}
