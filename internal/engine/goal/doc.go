// Package goal is the goal engine: zenflow's goal runs (RunGoal). A
// model, the planner, turns the user's message into a workflow in
// zenflow's spec v1 format; the plan is checked exactly as a workflow
// file is (graph.ParseIn), and may use only the agents the goal agent's
// configuration names; a person approves, edits or rejects it when the
// agent asks for approval; then it runs as a graph workflow.
//
// A run goes through three phases, each ended by a checkpoint, so that a
// resumed run never repeats one:
//
//   - planning: the planner answers with a workflow document; an invalid
//     one goes back to it with the problems found, at most MaxRetries
//     times, after which the run fails (class model_output) naming them.
//     The valid plan is published (a plan event, shaped as the graph
//     engine's, with the document under "document", and a "plan"
//     artifact).
//   - approval (Config.Approval): the run asks with the approval prompt
//     of engine/approval.go, one pending call "plan-<n>" whose arguments
//     are the workflow as JSON, and waits in input-required. approve runs
//     it; edit (arguments: the changed workflow) is checked again and,
//     when valid, runs, and when not, is asked again with the problems;
//     reject ends the run (rejected, class validation). The prompt's
//     checkpoint ("goal:approval") holds the plan, so the answer resumes
//     the run without planning again.
//   - running: the accepted plan is checkpointed ("goal:accepted") before
//     any step runs, then executed by a graph.Engine under a host that
//     wraps each of the graph's checkpoints in the goal's own
//     ("goal:graph:<graph step>", the plan beside the graph's payload):
//     a resume restores the plan and hands the graph its own checkpoint,
//     so finished steps are not run again and interrupted ones resume
//     from their child run's checkpoint. The outcome of every step is
//     published as the "result" artifact.
//
// Imports: engine, engine/graph, errdefs, llm, model. goal must not
// import runtime, store, a face or config: the planner's provider and the
// engines of the plan's agents are handed in (Config).
package goal
