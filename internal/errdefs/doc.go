// Package errdefs classifies errors so that every layer can say what kind of
// failure happened without knowing who will report it.
//
// A class travels with an error through wrapping: construct with a class
// constructor (NotFoundf, Validation, …), wrap freely with %w, and test with
// the Is… predicates or ClassOf anywhere up the stack. Any error type joins a
// class by implementing Classifier. HTTPStatus is the single mapping from a
// class to an HTTP status; the A2A mapping lives in internal/a2a.
//
// Imports: none.
package errdefs
