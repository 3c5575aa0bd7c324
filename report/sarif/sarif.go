// Package sarif holds the SARIF 2.1.0 objects racekit writes: racekit
// vet's static warnings (package static) and racekit test's races
// (package report) share them. Optional members are left out when empty,
// as the schema wants absent rather than null.
package sarif

// Version is the SARIF version the logs say.
const Version = "2.1.0"

// Schema is the schema a log's $schema names: the OASIS SARIF 2.1.0
// schema (errata 01), the one sariftest validates against.
const Schema = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"

// Log is a SARIF log.
type Log struct {
	Schema  string `json:"$schema"`
	Version string `json:"version"`
	Runs    []Run  `json:"runs"`
}

// Run is one run of one tool.
type Run struct {
	Tool               Tool                        `json:"tool"`
	OriginalURIBaseIDs map[string]ArtifactLocation `json:"originalUriBaseIds,omitempty"`
	Results            []Result                    `json:"results"`
}

// Tool names the tool.
type Tool struct {
	Driver Driver `json:"driver"`
}

// Driver is the tool's component, with its rules.
type Driver struct {
	Name           string `json:"name"`
	InformationURI string `json:"informationUri"`
	Rules          []Rule `json:"rules"`
}

// Rule is one kind of result.
type Rule struct {
	ID                   string         `json:"id"`
	Name                 string         `json:"name"`
	ShortDescription     Message        `json:"shortDescription"`
	FullDescription      *Message       `json:"fullDescription,omitempty"`
	HelpURI              string         `json:"helpUri,omitempty"`
	DefaultConfiguration *Configuration `json:"defaultConfiguration,omitempty"`
}

// Configuration is a rule's default configuration.
type Configuration struct {
	Level string `json:"level"`
}

// Message is a plain-text message.
type Message struct {
	Text string `json:"text"`
}

// Result is one finding.
type Result struct {
	RuleID           string         `json:"ruleId"`
	RuleIndex        int            `json:"ruleIndex"`
	Level            string         `json:"level,omitempty"`
	Message          Message        `json:"message"`
	Locations        []Location     `json:"locations"`
	RelatedLocations []Location     `json:"relatedLocations,omitempty"`
	CodeFlows        []CodeFlow     `json:"codeFlows,omitempty"`
	Properties       map[string]any `json:"properties,omitempty"`
}

// Location is a place in the code, physical or logical.
type Location struct {
	ID               int               `json:"id,omitempty"`
	PhysicalLocation *PhysicalLocation `json:"physicalLocation,omitempty"`
	LogicalLocations []LogicalLocation `json:"logicalLocations,omitempty"`
	Message          *Message          `json:"message,omitempty"`
}

// PhysicalLocation is a region of a file.
type PhysicalLocation struct {
	ArtifactLocation ArtifactLocation `json:"artifactLocation"`
	Region           *Region          `json:"region,omitempty"`
}

// ArtifactLocation is a file, by URI, relative to a base when UriBaseID
// is set.
type ArtifactLocation struct {
	URI       string `json:"uri"`
	URIBaseID string `json:"uriBaseId,omitempty"`
}

// Region is a position in a file, from 1.
type Region struct {
	StartLine   int `json:"startLine"`
	StartColumn int `json:"startColumn,omitempty"`
}

// LogicalLocation is a named place: a function.
type LogicalLocation struct {
	FullyQualifiedName string `json:"fullyQualifiedName"`
	Kind               string `json:"kind,omitempty"`
}

// CodeFlow is a set of threads' flows: a race's two stacks.
type CodeFlow struct {
	Message     *Message     `json:"message,omitempty"`
	ThreadFlows []ThreadFlow `json:"threadFlows"`
}

// ThreadFlow is one thread's locations, in execution order.
type ThreadFlow struct {
	Message   *Message             `json:"message,omitempty"`
	Locations []ThreadFlowLocation `json:"locations"`
}

// ThreadFlowLocation is one location of a thread flow, nested by call
// depth.
type ThreadFlowLocation struct {
	Location     Location `json:"location"`
	NestingLevel int      `json:"nestingLevel"`
}
