package graph

// checkpointMailPrefix is the Step of a checkpoint written after a
// message was sent or taken: "mail:<step id>".
const checkpointMailPrefix = "mail:"
