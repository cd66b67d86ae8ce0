//! One test per bug found after the first release, named for what went wrong, with the
//! issue that found it: a fixed bug must stay fixed.
