// The checker of script objects lives beside the rule interpreter (src/traffic/irules/tcl-check.ts), so that
// what is stored and what runs are read by the same rules of Tcl 8.6; this module keeps its name for the
// device's handlers.
export { checkScript, type ScriptCheck } from '../../traffic/irules/tcl-check.ts';
