//! PTX lexer (logos).
