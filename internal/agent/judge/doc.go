// Package judge is an agent.Decider that asks a model — the judge —
// whether a completed answer is acceptable, and asks for a revision with
// the judge's feedback when it is not (agent.WithMaxRevise bounds the
// revisions; the feedback is left under agent.ReviseFeedbackStateKey for
// the seeder of the next attempt).
//
// The judge reads the user's request and the answer, and replies ACCEPT,
// or REVISE: followed by what must change; any other reply counts as a
// revision asked for with the reply as its feedback, so that a judge that
// strays from the format never passes an answer by accident. A judge that
// cannot be reached fails the decision (and the run): an answer the
// configuration says must be judged is never let through unjudged.
//
// Imports: agent, llm, model. Never the runtime.
package judge
