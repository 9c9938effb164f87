package snapshot

// Checking an item's JSON in the walk that reads its header: json.Valid
// was a second pass over every byte of a dump (a quarter of decoding its
// items), and the header's walk already visits every key and value. The
// walk is strict where json.Valid is (strings, escapes, numbers, literals,
// commas), and sound, not complete: when it says yes, json.Valid says
// yes; when it declines (a key given twice, an escaped key, deep nesting,
// anything unexpected), json.Valid decides, as before.

// maxCheckedDepth is the deepest nesting the walk checks; deeper objects
// are left to json.Valid (whose limit is 10,000).
const maxCheckedDepth = 512

// strByte says, for each byte in a string, what the checking walk does:
// 0 goes on, 1 ends the string ("), 2 starts an escape (\), 3 is a
// control character (an error), 4 is a byte of a non-ASCII character.
var strByte = func() (t [256]byte) {
	for c := range 0x20 {
		t[c] = 3
	}
	t['"'], t['\\'] = 1, 2
	for c := 0x80; c < 0x100; c++ {
		t[c] = 4
	}
	return t
}()

// checkString moves past the string at s.i, false when it is not one
// JSON allows. It notes non-ASCII bytes and \u escapes of surrogates
// (plain).
func (s *scanner) checkString() bool {
	b := s.b
	if s.i >= len(b) || b[s.i] != '"' {
		return false
	}
	for i := s.i + 1; i < len(b); {
		switch strByte[b[i]] {
		case 0:
			i++
		case 1:
			s.i = i + 1
			return true
		case 2:
			if i+1 >= len(b) {
				return false
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(b) || !isHex(b[i+2]) || !isHex(b[i+3]) || !isHex(b[i+4]) || !isHex(b[i+5]) {
					return false
				}
				if b[i+2] == 'd' || b[i+2] == 'D' {
					s.surrogate = true
				}
				i += 6
			default:
				return false
			}
		case 3:
			return false
		default:
			s.nonASCII = true
			i++
		}
	}
	return false
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// checkScalar moves past the string, number, true, false or null at s.i,
// false when it is not one JSON allows. What follows it is next's to
// check.
func (s *scanner) checkScalar() bool {
	if s.i >= len(s.b) {
		return false
	}
	switch c := s.b[s.i]; {
	case c == '"':
		return s.checkString()
	case c == 't':
		return s.literal("true")
	case c == 'f':
		return s.literal("false")
	case c == 'n':
		return s.literal("null")
	case c == '-' || '0' <= c && c <= '9':
		return s.checkNumber()
	}
	return false
}

func (s *scanner) literal(lit string) bool {
	if len(s.b)-s.i < len(lit) || string(s.b[s.i:s.i+len(lit)]) != lit {
		return false
	}
	s.i += len(lit)
	return true
}

// checkNumber moves past a number: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
func (s *scanner) checkNumber() bool {
	b, i := s.b, s.i
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && '1' <= b[i] && b[i] <= '9':
		i = digits(b, i)
	default:
		return false
	}
	if i < len(b) && b[i] == '.' {
		if j := digits(b, i+1); j > i+1 {
			i = j
		} else {
			return false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := digits(b, i)
		if j == i {
			return false
		}
		i = j
	}
	s.i = i
	return true
}

// digits returns the end of the run of digits at i.
func digits(b []byte, i int) int {
	for i < len(b) && '0' <= b[i] && b[i] <= '9' {
		i++
	}
	return i
}
