// Types of `/console/vendor/htm.mjs`: the installed htm (see preact.d.mts).
import htm from 'htm';
export default htm;
