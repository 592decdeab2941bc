// Boost.JSON's implementation, compiled once here: Debian ships it as headers, and this
// is the only place the project parses JSON (fio's output).
#include <boost/json/src.hpp>
